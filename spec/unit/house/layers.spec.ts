import { expect } from 'chai';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Lints `code` as if it were the file at `path` (an existing file, so the type-aware rules know it). */
async function lint(path: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return result!.messages.map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

describe('the layer rules in eslint.config.js', function () {
  // type-aware linting starts a TypeScript program: seconds on a loaded machine
  this.timeout(120_000);

  it('refuse an import that runs back up the layers', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['protocol/codes.ts', "import { SERVICE_DEFINITIONS } from '../actors/index.js';\nexport const x = SERVICE_DEFINITIONS;\n", /protocol\/ sits below/],
      ['config/echo.ts', "import { Template } from '../template/template.js';\nexport const x = Template;\n", /config\/ sits below/],
      ['template/budget.ts', "import type { HiveClient } from '../actors/hive/client.js';\nexport type X = HiveClient;\n", /template\/ sits below/],
      ['supervisors/fifo.ts', "import { InFlight } from '../actors/service/serve.js';\nexport const x = InFlight;\n", /supervisors\/ sits below/],
      ['actors/echo/echo.ts', "import { HiveNode } from '../../node/node.js';\nexport const x = HiveNode;\n", /actors\/ sits below/],
    ];
    for (const [path, code, expected] of cases) {
      const messages = await lint(path, code);
      expect(messages.join('\n'), path).to.match(expected);
    }
  });

  it('let only the runtime import nact', async () => {
    expect((await lint('actors/hive/bridge.ts', "import nact from 'nact';\nexport const x = nact;\n")).join('\n')).to.match(/only supervisors\/runtime.ts imports nact/);
    expect(await lint('supervisors/runtime.ts', "import nact from 'nact';\nexport const x = nact;\n")).to.not.satisfy((m: string[]) => m.some((x) => x.includes('nact')));
  });

  it('accept an import that points down', async () => {
    expect(await lint('actors/echo/echo.ts', "import { Code } from '../../protocol/codes.js';\nexport const x = Code;\n")).to.deep.equal([]);
  });
});
