/**
 * The exec service (README, The exec service): the Template (Go text/template, `{{ }}`, the exec functions)
 * turns the message Data into a command and arguments, which run directly — never through a shell,
 * so wildcards and `$(…)` stay literal unless the template itself runs `/bin/sh -c`. Result Data:
 * stdout and stderr as lists of lines, exitcode; a non-zero exit is Code 502
 * (docs/ARCHITECTURE.md, Result shapes).
 */
import { isAbsolute } from 'node:path';
import { EXEC_PARAMS } from '../../config/exec.js';
import type { ConfigOf } from '../../config/params.js';
import { templateBudget } from '../../config/common.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { splitList } from '../../config/values.js';
import { Code } from '../../protocol/codes.js';
import {
  BadInputError,
  ConfigError,
  ForbiddenError,
  OverloadedError,
  TimeoutError,
  UnavailableError,
  describeError,
} from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { emptyMap, failure, success } from '../../protocol/message.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { handleAsync, serve } from '../service/serve.js';
import { ExecTemplate } from '../../template/dialects/exec.js';
import { pathLikeTemplateWarning, resolveTemplateSource } from '../hive/template-source.js';
import type { HiveClient } from '../hive/client.js';
import type { CommandOutcome, CommandRun } from './run-command.js';
import { startCommand } from './run-command.js';
import { Slots } from './slots.js';
import { annotateSpan, inMessageTrace } from '../observe/trace-scope.js';

type ExecConfig = ConfigOf<typeof EXEC_PARAMS>;

/** Output as a list of lines (a final newline does not make an empty last line). */
export function lines(text: string): string[] {
  if (text === '') return [];
  const all = text.split(/\r?\n/);
  if (all[all.length - 1] === '') all.pop();
  return all;
}

function resultOf(command: string, o: CommandOutcome): Result {
  const data = emptyMap();
  data.stdout = lines(o.stdout);
  data.stderr = lines(o.stderr);
  data.exitcode = [o.exitCode === null ? '' : String(o.exitCode)];
  if (o.signal) data.signal = [o.signal];
  if (o.truncated) data.truncated = ['true'];
  if (o.timedOut) return failure(Code.Timeout, `${command} did not finish in time and was killed`, data);
  if (o.stopped) return failure(Code.Unavailable, `${command} was killed: the node is shutting down`, data);
  if (o.exitCode === 0) return success(data, []);
  return failure(
    Code.UpstreamError,
    o.signal ? `${command} was killed by ${o.signal}` : `${command} exited with ${o.exitCode}`,
    data,
  );
}

/** The environment variables EnvAllowList lets the template read. */
function allowedEnv(c: ExecConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of splitList(c.EnvAllowList)) {
    const v = process.env[name];
    if (v !== undefined) env[name] = v;
  }
  return env;
}

const loadTemplate = async (c: ExecConfig, name: string, hive?: HiveClient): Promise<ExecTemplate> =>
  new ExecTemplate(
    await resolveTemplateSource(c.Template, { ...(hive ? { hive } : {}), templateChannel: c.TemplateChannel }),
    { name, env: allowedEnv(c), ...templateBudget(c) },
  );

/**
 * The exec service's start-time checks: AllowedCommands, and a file:// or inline Template parsed
 * (hive:// ones are fetched on first use). `hivenode check` and a reload run it alone.
 */
async function check(c: ExecConfig, name: string, hive?: HiveClient): Promise<ExecTemplate | undefined> {
  for (const a of splitList(c.AllowedCommands))
    if (!isAbsolute(a)) throw new ConfigError(`AllowedCommands: '${a}' is not an absolute path`);
  if (c.Template.startsWith('hive://')) return undefined;
  try {
    return await loadTemplate(c, name, hive);
  } catch (e) {
    throw new ConfigError(`Template: ${describeError(e)}`);
  }
}

async function start(ctx: ServiceContext<ExecConfig>): Promise<RunningService> {
  const c = ctx.config;
  const pathLike = pathLikeTemplateWarning('Template', c.Template);
  if (pathLike !== undefined) ctx.log.warn(pathLike);
  let template = await check(c, ctx.name, ctx.hive);
  const allowed = new Set(splitList(c.AllowedCommands));
  const env = allowedEnv(c);
  const load = (): Promise<ExecTemplate> => loadTemplate(c, ctx.name, ctx.hive);
  const slots = new Slots(c.MaxConcurrent, c.MaxWaiting);
  let ran = 0;
  // runs whose processes may still be alive: node shutdown, and even a hard exit, kills what is left
  const runs = new Set<CommandRun>();
  let closed = false;
  const killAllNow = (): void => {
    for (const run of runs) run.stopSync();
  };

  const handle = async (message: Message): Promise<Result> => {
    template ??= await load();
    const rendered = template.render(message.Data, env);
    // lines written after an await (a hive:// template's first load) are still the message's
    if (c.DEBUG_TEMPLATE)
      inMessageTrace(message, () =>
        ctx.log.info(
          `template rendered command ${JSON.stringify(rendered.command)} args ${JSON.stringify(rendered.args)}`,
        ),
      );
    const command = rendered.command;
    if (command === undefined || command === '')
      throw new BadInputError('the template did not set a command (call setCmd)');
    // the span names the command; its arguments (which may hold secrets) only with LOGSENSITIVE
    annotateSpan(message, () => ({
      'process.executable.name': command,
      ...(c.LOGSENSITIVE ? { 'process.command_args': JSON.stringify(rendered.args) } : {}),
    }));
    if (allowed.size > 0 && !allowed.has(command))
      throw new ForbiddenError(`command '${command}' is not in AllowedCommands`);
    for (const a of [command, ...rendered.args])
      if (a.includes('\0')) throw new BadInputError('a command or argument contains a NUL character');
    let stdin: string | undefined;
    if (c.StdinField) stdin = Object.hasOwn(message.Data, c.StdinField) ? message.Data[c.StdinField]!.join('\n') : '';
    const release = await slots.acquire(c.WaitTimeout).catch((e: unknown) => {
      if (e instanceof TimeoutError)
        throw new OverloadedError(`no free slot within ${c.WaitTimeout} ms (${c.MaxConcurrent} commands running)`);
      throw e;
    });
    let run: CommandRun;
    try {
      if (closed) throw new UnavailableError('the node is shutting down');
      run = startCommand(
        {
          command,
          args: rendered.args,
          env,
          cwd: c.WorkDir || undefined,
          stdin,
          timeoutMs: c.Timeout,
          killGraceMs: c.KillGrace,
          maxOutputBytes: c.MaxOutputBytes,
        },
        (m) => inMessageTrace(message, () => ctx.log.warn(m)),
      );
    } catch (e) {
      release();
      throw e;
    }
    ran++;
    runs.add(run);
    // the slot is held until the run's last process is gone, which may be after the answer
    void run.ended.then(() => {
      runs.delete(run);
      release();
    });
    const outcome = await run.outcome;
    if (outcome.spawnError) {
      const code = outcome.spawnError.code;
      if (code === 'ENOENT') throw new BadInputError(`command '${command}' was not found`);
      if (code === 'EACCES') throw new ForbiddenError(`command '${command}' may not be executed (EACCES)`);
      throw outcome.spawnError;
    }
    return resultOf(command, outcome);
  };

  process.on('exit', killAllNow);
  const running = await serve(ctx, {
    worker: 'commands',
    handle: handleAsync(handle),
    // past the drain's deadline: what still runs is killed without grace, and nothing new starts
    async close() {
      closed = true;
      await Promise.all([...runs].map((run) => run.stop()));
      process.off('exit', killAllNow);
    },
    status: () => ({ running: slots.busy, waiting: slots.waiting, ran }),
  });
  ctx.log.info(
    `exec listening on channel '${ctx.inputChannel}' (at most ${c.MaxConcurrent} commands at once, timeout ${c.Timeout} ms)`,
  );
  return running;
}

export const execService = defineService(
  SERVICES.exec,
  compilerFor('exec', EXEC_PARAMS),
  start,
  async (c, name) => void (await check(c, name)),
);
