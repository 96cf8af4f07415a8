/** axe-core in a console page: the WCAG rules every page is held to (accessibility.spec.ts, flows.spec.ts). */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** axe-core's WCAG 2 A and AA rules (landmarks, labels, names, contrast, …) on the page as it is. */
export async function violations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const found = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa', 'best-practice'] } }).then((r) => r.violations)",
  )) as AxeViolation[];
  return found.map((v) => `${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
