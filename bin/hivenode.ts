#!/usr/bin/env node
/**
 * The hivenode command line. Service commands (`hivenode echo -ReplyCode=201`) take parameters in the
 * spec's style (`-Name=value`), which yargs would split into single-letter flags, so they bypass yargs
 * and go to the config module; every other command goes through yargs.
 */
import { SERVICES, isServiceKind } from '../config/registry.js';
import { PACKAGE_VERSION } from './package-info.js';
import { exitOnConfigError, runNode } from './run-node.js';
import { usageError } from './usage.js';

// Every command's modules are imported when that command runs: `hivenode --version` and a node's start
// load only what they use (a node's services load their own drivers when they start: actors/index.ts).

function versionText(): string {
  const lines = [`hivenode ${PACKAGE_VERSION}`];
  for (const s of Object.values(SERVICES)) lines.push(`  ${s.kind.padEnd(10)} ${s.release}`);
  return lines.join('\n');
}

/** `hivenode run <file> [--dashboard-port N] [--watch]`: the node file's services, the option over the file's dashboard.Port; SIGHUP (and with --watch a change of the file) reloads it. */
async function runFile(path: string, dashboardPortText: string | undefined, watch = false): Promise<void> {
  const [{ parseDashboardPort }, { plansOf }, { compileTracing }, { readNodeFile, reloadOnSignal }] = await Promise.all(
    [import('../config/node-file.js'), import('./plans.js'), import('../config/tracing.js'), import('./reload.js')],
  );
  let read, dashboardPort, tracing;
  try {
    read = readNodeFile(path);
    dashboardPort =
      dashboardPortText === undefined
        ? read.file.dashboardPort
        : parseDashboardPort(dashboardPortText, '--dashboard-port');
    tracing = compileTracing(process.env, read.file.tracing, `${read.file.name} tracing`);
  } catch (e) {
    exitOnConfigError(e);
  }
  const { file, hash } = read;
  await runNode(
    {
      name: file.name,
      services: plansOf(file),
      tracing,
      source: { file: path, hash },
      ...(dashboardPort === undefined ? {} : { dashboardPort }),
      ...(file.dashboardAccess === undefined ? {} : { dashboardAccess: file.dashboardAccess }),
    },
    { onHangup: (node) => reloadOnSignal(node, path, read, watch) },
  );
}

/**
 * The file, port text and --watch of `run <file>`, `run <file> --dashboard-port N` or
 * `--dashboard-port=N`, each optionally with `--watch`, the shapes a node is started with; undefined
 * for any other (yargs then parses it, with its help and its refusals). Loading yargs and its parser
 * was a tenth of a node's start-up time and 10 MiB of its memory.
 */
function plainRun(
  argv: readonly string[],
): { file: string; dashboardPort: string | undefined; watch: boolean } | undefined {
  const watch = argv.includes('--watch');
  const [command, file, option, value, ...rest] = argv.filter((a) => a !== '--watch');
  if (command !== 'run' || file === undefined || file === '' || file.startsWith('-') || rest.length > 0)
    return undefined;
  if (option === undefined) return { file, dashboardPort: undefined, watch };
  const joined = /^--dashboard-port=(\d+)$/.exec(option);
  if (joined && value === undefined) return { file, dashboardPort: joined[1], watch };
  if (option === '--dashboard-port' && value !== undefined && /^\d+$/.test(value))
    return { file, dashboardPort: value, watch };
  return undefined;
}

/** The commands a service kind's word starts (see main); each takes exactly one argument. */
const KIND_COMMANDS: ReadonlyArray<{
  name: string;
  kinds: readonly string[];
  arg: string;
  example: (kind: string) => string;
  run: (kind: string, arg: string) => Promise<void>;
}> = [
  {
    name: 'check',
    kinds: ['flow'],
    arg: 'the definition (a YAML or JSON file)',
    example: () => 'examples/flows/order-intake.yaml',
    run: async (_kind, file) => (await import('./flow.js')).runFlowCheck(file),
  },
  {
    name: 'salvage',
    kinds: ['queue', 'flow'],
    arg: "the store's directory (PersistPath/<NAME>)",
    example: (kind) => `/var/lib/hivenode/${kind}/orders`,
    run: async (kind, dir) => (await import('./salvage.js')).runSalvage(kind as 'queue' | 'flow', dir),
  },
];

async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  const plain = plainRun(argv);
  if (plain) {
    await runFile(plain.file, plain.dashboardPort, plain.watch);
    return;
  }
  if (first === 'check' && argv.length === 2 && !argv[1]!.startsWith('-')) {
    await (await import('./reload.js')).runCheck(argv[1]!);
    return;
  }
  if (argv.length === 1 && first === '--version') {
    // what yargs' .version() below prints, without loading yargs and its parser for it
    console.log(versionText());
    return;
  }
  // commands sharing their first word with a service kind (`hivenode flow -Definition=…` runs a flow):
  // `hivenode flow check <file>`, `hivenode queue salvage <dir>` and `hivenode flow salvage <dir>`
  const sub =
    first === undefined ? undefined : KIND_COMMANDS.find((c) => c.kinds.includes(first) && c.name === argv[1]);
  if (first !== undefined && sub && !argv.includes('--help')) {
    if (argv.length !== 3 || argv[2]!.startsWith('-')) {
      console.error(
        `hivenode: hivenode ${first} ${sub.name} needs one argument, ${sub.arg}: hivenode ${first} ${sub.name} ${sub.example(first)}`,
      );
      process.exit(2);
    }
    await sub.run(first, argv[2]!);
    return;
  }
  if (first !== undefined && isServiceKind(first) && !argv.includes('--help')) {
    const [{ takeDashboardPort }, { singleServicePlan }] = await Promise.all([
      import('./status.js'),
      import('./plans.js'),
    ]);
    let plan, dashboardPort;
    try {
      const taken = takeDashboardPort(argv.slice(1));
      dashboardPort = taken.dashboardPort;
      plan = singleServicePlan(first, taken.rest, process.env);
    } catch (e) {
      exitOnConfigError(e);
    }
    await runNode({ services: [plan], ...(dashboardPort === undefined ? {} : { dashboardPort }) });
    return;
  }
  if (first === 'changes' && !argv.includes('--help')) {
    await (await import('./changes.js')).runChanges(argv.slice(1));
    return;
  }
  if (first === 'interceptor' && !argv.includes('--help')) {
    await (await import('./tools.js')).runInterceptor(argv.slice(1));
    return;
  }
  const [{ default: yargs }, { HIVE_OPTIONS }] = await Promise.all([import('yargs'), import('./hive-options.js')]);
  await yargs(argv)
    .scriptName('hivenode')
    .usage(
      '$0 <command>\n\nRun hive-connected worker services.\nA single service: hivenode <service> -Param=value … (every parameter also as an upper-case environment variable).',
    )
    .command(
      'run <file>',
      'run the services of a node file (YAML or JSON)',
      (y) =>
        y
          .positional('file', { type: 'string', demandOption: true, describe: 'node file' })
          // a string, parsed below: yargs would turn a bare or malformed port into NaN, not an error
          .option('dashboard-port', {
            type: 'string',
            describe: 'serve the dashboard on this port (overrides dashboard.Port of the file)',
          })
          .option('watch', {
            type: 'boolean',
            default: false,
            describe: 'reload the node file whenever it changes (as SIGHUP does)',
          }),
      (args) => runFile(args.file, args.dashboardPort, args.watch),
    )
    .command(
      'check <file>',
      'compile a node file completely (every service, template, definition, TLS file) without running it; every error one line, exit 0 or 2',
      (y) => y.positional('file', { type: 'string', demandOption: true, describe: 'node file' }),
      async (args) => (await import('./reload.js')).runCheck(args.file),
    )
    .command(
      'reload',
      "ask a running node's console to re-read its node file from disk (as SIGHUP does): prints the diff (exit 0) or the refusal (exit 2); the operator's password in HIVENODE_PASSWORD",
      (y) =>
        y
          .option('dashboard', {
            type: 'string',
            demandOption: true,
            describe: "the node's console, e.g. http://127.0.0.1:8099",
          })
          .option('user', { type: 'string', describe: 'an operator of dashboard.Users (default HIVENODE_USER)' }),
      async (args) => (await import('./reload.js')).runReloadDashboard(args.dashboard, args.user),
    )
    .command(
      'demo',
      'run the demo node (examples/demo.yaml) on the embedded hive',
      (y) =>
        y
          .option('once', { type: 'boolean', default: false, describe: 'show the demo calls, then stop' })
          .option('fresh', {
            type: 'boolean',
            default: false,
            describe: "start clean: remove the demo's state (its database, queue store and syslog record) first",
          }),
      async (args) => (await import('./demo.js')).runDemo(args.once, args.fresh),
    )
    .command(
      'interceptor <module>',
      'serve a mapping function (type, value, options) => {data, status, status_code, options} over HTTP; -Port=N -IP=addr',
    )
    .command(
      'passwd <user>',
      'add or replace a user in a gateway users file (and add it to groups of a groups file); the password is read from standard input',
      (y) =>
        y
          .positional('user', { type: 'string', demandOption: true })
          .option('file', { type: 'string', demandOption: true, describe: 'users file (created with mode 600)' })
          .option('group', {
            type: 'string',
            array: true,
            nargs: 1,
            describe: 'also add the user to this group (repeatable, or comma-separated)',
          })
          .option('groups-file', {
            type: 'string',
            describe: 'groups file the groups are written to (Apache AuthGroupFile format; other lines kept)',
          }),
      async (args) => (await import('./tools.js')).runPasswd(args.user, args.file, args.group ?? [], args.groupsFile),
    )
    .command(
      'send <channel>',
      'call a channel of a NATS hive and print the Result',
      (y) =>
        y
          .positional('channel', { type: 'string', demandOption: true })
          .option('data', { type: 'string', describe: 'Data as JSON: {"name": ["value"]}' })
          .option('control', { type: 'string', describe: 'Control as JSON' })
          .option('class', { type: 'string' })
          .option('operation', { type: 'string' })
          .option('execute', { type: 'boolean', default: false, describe: 'acknowledged hand-over instead of a call' })
          .option('timeout', { type: 'number', default: 30_000, describe: 'milliseconds' })
          .options(HIVE_OPTIONS),
      async (args) => (await import('./hive-tools.js')).runSend(args.channel, args),
    )
    .command(
      'template <action> [name]',
      'render a template file as a dry run (render FILE --dialect plain|queue|exec [--data F] [--delims L,R] [--define D]), or manage hive:// templates of a NATS hive: put (--file), get, list, delete',
      (y) =>
        y
          .positional('action', {
            type: 'string',
            choices: ['render', 'put', 'get', 'list', 'delete'],
            demandOption: true,
          })
          .positional('name', { type: 'string', describe: 'template name (render: the template file)' })
          .option('dialect', {
            type: 'string',
            choices: ['plain', 'queue', 'exec'],
            default: 'plain',
            describe: 'render: function set and delimiters',
          })
          .option('data', { type: 'string', describe: 'render: JSON data file' })
          .option('delims', { type: 'string', describe: 'render: delimiters as L,R' })
          .option('define', { type: 'string', describe: "render (queue): the define block to run (default 'default')" })
          .option('file', { type: 'string' })
          .option('channel', {
            type: 'string',
            default: 'DefaultStorageChannel',
            describe: 'template channel (the bucket name)',
          })
          .options(HIVE_OPTIONS),
      async (args) =>
        args.action === 'render'
          ? (await import('./render.js')).runRender(args.name, args)
          : (await import('./hive-tools.js')).runTemplate(args.action, args.name, args),
    )
    .command(
      'flow check <definition>',
      'check a flow definition (YAML or JSON file) as a node would at start, and print its steps as a graph',
      (y) => y.positional('definition', { type: 'string', demandOption: true, describe: 'definition file' }),
      async (args) => (await import('./flow.js')).runFlowCheck(args.definition),
    )
    .command(
      'flow salvage <dir>',
      'recover what reads of a damaged flow store (PersistPath/<NAME>) into a new store; the damaged file is kept beside it',
      (y) => y.positional('dir', { type: 'string', demandOption: true, describe: 'the store directory' }),
      async (args) => (await import('./salvage.js')).runSalvage('flow', args.dir),
    )
    .command(
      'queue salvage <dir>',
      'recover what reads of a damaged queue store (PersistPath/<NAME>) into a new store; the damaged file is kept beside it',
      (y) => y.positional('dir', { type: 'string', demandOption: true, describe: 'the store directory' }),
      async (args) => (await import('./salvage.js')).runSalvage('queue', args.dir),
    )
    .command(
      'changes drop <name>',
      'drop the PostgreSQL replication slot a change stream (SQL_CHANGES) of this NAME left behind; the database as -SQL_…=… parameters (or environment)',
    )
    .command(
      'status',
      "print a running node's services and actor tree (from its dashboard)",
      (y) => y.option('url', { type: 'string', default: 'http://127.0.0.1:8099', describe: 'dashboard address' }),
      async (args) => (await import('./status.js')).runStatus(args.url),
    )
    .command(
      'params [service]',
      'print the parameter table of a service (or of all)',
      (y) =>
        y
          .positional('service', { type: 'string', choices: Object.keys(SERVICES), describe: 'service kind' })
          .option('markdown', { type: 'boolean', default: false, describe: 'print the README reference in Markdown' }),
      async (args) => {
        const { renderParamsMarkdown, renderParamsText } = await import('../config/docs.js');
        const infos = args.service ? [SERVICES[args.service as keyof typeof SERVICES]] : Object.values(SERVICES);
        console.log(infos.map((i) => (args.markdown ? renderParamsMarkdown(i) : renderParamsText(i))).join('\n\n'));
      },
    )
    .command(
      '$0',
      false,
      () => undefined,
      () => {
        console.log(versionText());
        console.log('\nRun `hivenode --help` for the commands, `hivenode params` for every service parameter.');
      },
    )
    .version(versionText())
    .strict()
    .help()
    .fail((msg, err) => {
      if (err) throw err;
      console.error(usageError(argv, msg));
      process.exit(2);
    })
    .parseAsync();
}

main(process.argv.slice(2)).catch((e: unknown) => {
  console.error(`hivenode: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
