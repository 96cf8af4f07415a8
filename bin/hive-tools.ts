/**
 * Commands that talk to a running NATS hive from a shell: `hivenode send` calls any channel, and
 * `hivenode template put|get|list|delete` manages hive:// templates in the template bucket.
 */
import { readFileSync } from 'node:fs';
import { NatsTransport } from '../actors/hive/nats.js';
import { hiveAccess } from '../config/hive-access.js';
import { readSecret } from '../config/resolve.js';
import { ConfigError, describeError } from '../protocol/errors.js';
import { makeMessage, validateValueMap } from '../protocol/message.js';
import { parseJson } from '../protocol/wire.js';
import { createLogger } from '../actors/observe/logger.js';
import { exitOnConfigError } from './run-node.js';
import type { HIVE_OPTIONS } from './hive-options.js';

export interface HiveArgs {
  server?: string | undefined;
  auth?: string | undefined;
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
}

/** Option --`flag`, else environment variable `param`; a secret's `file://` is read (the message names which source). */
function given(args: HiveArgs, flag: keyof typeof HIVE_OPTIONS, param: string, secret = false): string {
  const option = args[flag];
  const value = option ?? process.env[param] ?? '';
  return secret ? readSecret(value, param, option === undefined ? 'environment' : `--${flag}`) : value;
}

async function connectHive(args: HiveArgs): Promise<NatsTransport> {
  const server = args.server ?? process.env.SERVERHOST ?? '';
  if (!/^(nats|tls):\/\//.test(server))
    throw new ConfigError(
      'a NATS hive is needed: give --server nats://host:port (or SERVERHOST); the embedded hive lives inside one node process',
    );
  const access = hiveAccess({
    SERVERAUTH: given(args, 'auth', 'SERVERAUTH', true),
    SERVERCA: given(args, 'ca', 'SERVERCA'),
    SERVERCERT: given(args, 'cert', 'SERVERCERT'),
    SERVERKEY: given(args, 'key', 'SERVERKEY', true),
  });
  const t = new NatsTransport({
    servers: server,
    access,
    name: 'hivenode cli',
    log: createLogger({ level: 'warn', stream: process.stderr }),
  });
  await t.connect();
  return t;
}

/** `hivenode send <channel>`: prints the Result as JSON; exits 0 for a 2xx Code, else 1. */
export async function runSend(
  channel: string,
  opts: HiveArgs & {
    data?: string | undefined;
    control?: string | undefined;
    execute?: boolean;
    timeout: number;
    class?: string | undefined;
    operation?: string | undefined;
  },
): Promise<void> {
  let hive: NatsTransport | undefined;
  try {
    const data = validateValueMap(parseJson(opts.data ?? '{}', '--data'), '--data');
    const control = validateValueMap(parseJson(opts.control ?? '{}', '--control'), '--control');
    hive = await connectHive(opts);
    const message = makeMessage({
      Class: opts.class ?? '',
      Operation: opts.operation ?? '',
      Data: data,
      Control: control,
    });
    const result = await hive.callAsync(channel, message, opts.timeout, opts.execute ? 'execute' : 'call');
    console.log(JSON.stringify(result, null, 2));
    process.exitCode = result.Code >= 200 && result.Code <= 299 ? 0 : 1;
  } catch (e) {
    if ((e as { code?: unknown }).code === 400) {
      console.error(`hivenode: ${describeError(e)}`);
      process.exitCode = 2;
    } else exitOnConfigError(e);
  } finally {
    await hive?.close();
  }
}

/** `hivenode template <put|get|list|delete> [name] [--file F]` on the bucket of --channel. */
export async function runTemplate(
  action: string,
  name: string | undefined,
  opts: HiveArgs & { file?: string | undefined; channel: string },
): Promise<void> {
  let hive: NatsTransport | undefined;
  try {
    if (action !== 'list' && !name) throw new ConfigError(`template ${action} needs a template name`);
    hive = await connectHive(opts);
    const bucket = await hive.templates(opts.channel);
    switch (action) {
      case 'put': {
        if (!opts.file) throw new ConfigError('template put needs --file <path>');
        await bucket.put(name!, readFileSync(opts.file, 'utf8'));
        console.log(`stored hive://${name} in bucket ${opts.channel}`);
        break;
      }
      case 'get': {
        const content = await bucket.get(name!);
        if (content === undefined) {
          console.error(`hivenode: no template '${name}' in bucket ${opts.channel}`);
          process.exitCode = 1;
        } else process.stdout.write(content);
        break;
      }
      case 'list':
        for (const n of await bucket.list()) console.log(n);
        break;
      case 'delete':
        await bucket.remove(name!);
        console.log(`deleted hive://${name}`);
        break;
      default:
        throw new ConfigError(`template action '${action}' is not known; use put, get, list or delete`);
    }
  } catch (e) {
    exitOnConfigError(e);
  } finally {
    await hive?.close();
  }
}
