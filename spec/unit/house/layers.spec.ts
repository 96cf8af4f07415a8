import { expect } from 'chai';
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import tseslint from 'typescript-eslint';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The rules that need a TypeScript program: building one took a minute of a loaded machine, and no layer rule needs it. */
const TYPED_RULES = new Set(
  Object.entries(
    (tseslint.plugin as { rules?: Record<string, { meta: { docs?: { requiresTypeChecking?: boolean } } }> }).rules ??
      {},
  )
    .filter(([, rule]) => rule.meta.docs?.requiresTypeChecking === true)
    .map(([name]) => `@typescript-eslint/${name}`),
);

/** eslint.config.js as `npx eslint` reads it, but for the rules that need type information (and the program they need). */
const eslint = new ESLint({
  cwd: ROOT,
  ruleFilter: ({ ruleId }) => !TYPED_RULES.has(ruleId),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
});

/** Lints `code` as if it were the file at `path`, with every rule of eslint.config.js that reads no types. */
async function lint(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}${path}` });
  return result!.messages.map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

describe('the layer rules in eslint.config.js', function () {
  // the import resolver reads tsconfig.json once: seconds on a loaded machine
  this.timeout(60_000);

  it('refuse an import that runs back up the layers', async () => {
    const cases: Array<[string, string, RegExp]> = [
      [
        'protocol/codes.ts',
        "import { SERVICE_DEFINITIONS } from '../actors/index.js';\nexport const x = SERVICE_DEFINITIONS;\n",
        /protocol\/ sits below/,
      ],
      [
        'config/echo.ts',
        "import { Template } from '../template/template.js';\nexport const x = Template;\n",
        /config\/ sits below/,
      ],
      [
        'template/budget.ts',
        "import type { HiveClient } from '../actors/hive/client.js';\nexport type X = HiveClient;\n",
        /template\/ sits below/,
      ],
      [
        'supervisors/fifo.ts',
        "import { InFlight } from '../actors/service/serve.js';\nexport const x = InFlight;\n",
        /supervisors\/ sits below/,
      ],
      [
        'actors/echo/echo.ts',
        "import { HiveNode } from '../../node/node.js';\nexport const x = HiveNode;\n",
        /actors\/ sits below/,
      ],
    ];
    for (const [path, code, expected] of cases) {
      const messages = await lint(path, code);
      expect(messages.join('\n'), path).to.match(expected);
    }
  });

  it('refuse an import from a room of actors/ that sits above (the base rooms: shared, wire, observe, net, auth)', async () => {
    const cases: Array<[string, string, RegExp]> = [
      [
        'actors/shared/deadlines.ts',
        "import { createLogger } from '../observe/logger.js';\nexport const x = createLogger;\n",
        /actors\/shared\/ sits below/,
      ],
      [
        'actors/wire/http1-parser.ts',
        "import { createLogger } from '../observe/logger.js';\nexport const x = createLogger;\n",
        /actors\/wire\/ sits below/,
      ],
      [
        'actors/observe/trace-ring.ts',
        "import { proxySettings } from '../net/proxy.js';\nexport const x = proxySettings;\n",
        /actors\/observe\/ sits below/,
      ],
      [
        'actors/net/proxy.ts',
        "import { QUEUE_CONTROLS } from '../queue/command-parser.js';\nexport const x = QUEUE_CONTROLS;\n",
        /actors\/net\/ sits below/,
      ],
      [
        'actors/net/listen.ts',
        "import { BasicAuth } from '../auth/authenticate.js';\nexport const x = BasicAuth;\n",
        /actors\/net\/ sits below/,
      ],
      [
        'actors/auth/groups.ts',
        "import { parseRoutes } from '../gateway/routes.js';\nexport const x = parseRoutes;\n",
        /actors\/auth\/ sits below/,
      ],
    ];
    for (const [path, code, expected] of cases) {
      const messages = await lint(path, code);
      expect(messages.join('\n'), path).to.match(expected);
    }
    expect(
      await lint(
        'actors/observe/trace-ring.ts',
        "import { Deadlines } from '../shared/deadlines.js';\nexport const x = Deadlines;\n",
      ),
      'a base room imports the rooms below it',
    ).to.deep.equal([]);
  });

  it("refuse a service importing another service; the flow may use the queue's stores alone", async () => {
    expect(
      (
        await lint(
          'actors/sql/poller.ts',
          "import { DedupKeys } from '../queue/dedup.js';\nexport const x = DedupKeys;\n",
        )
      ).join('\n'),
    ).to.match(/actors\/sql\/ is a service: it imports no other service's room/);
    expect(
      (
        await lint(
          'actors/flow/run.ts',
          "import { DedupKeys } from '../queue/dedup.js';\nexport const x = DedupKeys;\n",
        )
      ).join('\n'),
    ).to.match(/of the queue only its stores/);
    expect(
      await lint(
        'actors/flow/run.ts',
        "import { MemoryStore } from '../queue/memory-store.js';\nexport const x = MemoryStore;\n",
      ),
    ).to.deep.equal([]);
  });

  it('let only the runtime import nact', async () => {
    expect(
      (await lint('actors/hive/bridge.ts', "import nact from 'nact';\nexport const x = nact;\n")).join('\n'),
    ).to.match(/only supervisors\/runtime.ts imports nact/);
    expect(await lint('supervisors/runtime.ts', "import nact from 'nact';\nexport const x = nact;\n")).to.not.satisfy(
      (m: string[]) => m.some((x) => x.includes('nact')),
    );
  });

  it('accept an import that points down', async () => {
    expect(
      await lint('actors/echo/echo.ts', "import { Code } from '../../protocol/codes.js';\nexport const x = Code;\n"),
    ).to.deep.equal([]);
  });
});
