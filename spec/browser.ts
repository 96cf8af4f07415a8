/**
 * Debian's chromium driven by playwright-core (no browser download): the path, the flags that keep
 * it off the network, and whether a test may skip when it is missing (only outside CI; scripts/test.sh
 * installs it).
 */
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { requireInstalled } from './support/installed.js';

export const CHROMIUM = '/usr/bin/chromium';

/** Launches headless chromium, or skips the test (throws in CI) when it is not installed. */
export async function launchChromium(test: Mocha.Context): Promise<Browser> {
  requireInstalled(existsSync(CHROMIUM), 'chromium is not installed (scripts/test.sh installs it)', test);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
