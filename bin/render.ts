/** `hivenode template render`: a dry run of a template file in the plain, queue or exec dialect. */
import { renderTemplateFile } from '../template/render-command.js';
import type { Dialect } from '../template/render-command.js';
import { describeError } from '../protocol/errors.js';

export async function runRender(
  file: string | undefined,
  opts: { dialect: string; data?: string | undefined; delims?: string | undefined; define?: string | undefined },
): Promise<void> {
  if (!file) {
    console.error('hivenode: template render needs a template file');
    process.exitCode = 2;
    return;
  }
  let delims: [string, string] | undefined;
  if (opts.delims !== undefined) {
    const parts = opts.delims.split(',');
    if (parts.length !== 2 || !parts[0] || !parts[1]) {
      console.error("hivenode: --delims takes two delimiters separated by a comma, for example '[[,]]'");
      process.exitCode = 2;
      return;
    }
    delims = [parts[0], parts[1]];
  }
  try {
    const out = await renderTemplateFile({
      dialect: opts.dialect as Dialect,
      file,
      ...(delims ? { delims } : {}),
      ...(opts.data !== undefined ? { dataFile: opts.data } : {}),
      ...(opts.define !== undefined ? { define: opts.define } : opts.dialect === 'queue' ? { define: 'default' } : {}),
    });
    process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
  } catch (e) {
    console.error(`hivenode: ${describeError(e)}`);
    process.exitCode = 1;
  }
}
