/** Small commands beside running nodes: the interceptor kit and the users-file writer. */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { INTERCEPTOR_PARAMS } from '../config/interceptor.js';
import { commandLineLayer, compileConfig, environmentLayer } from '../config/resolve.js';
import { loadInterceptor, serveInterceptor } from '../actors/interceptor/server.js';
import { passwdLine } from '../actors/gateway/auth.js';
import { ConfigError } from '../protocol/errors.js';
import { exitOnConfigError } from './run-node.js';

/** `hivenode interceptor <module> -Port=N -IP=addr`: serves a mapping function until SIGTERM/SIGINT. */
export async function runInterceptor(args: string[]): Promise<void> {
  const [modulePath, ...rest] = args;
  try {
    if (!modulePath || modulePath.startsWith('-')) throw new ConfigError('usage: hivenode interceptor <module.js> [-Port=N] [-IP=addr]');
    const c = compileConfig('interceptor', INTERCEPTOR_PARAMS, [environmentLayer(process.env, INTERCEPTOR_PARAMS), commandLineLayer(rest)]).values;
    const fn = await loadInterceptor(modulePath);
    const running = await serveInterceptor(fn, c.Port, c.IP);
    console.log(`interceptor ${modulePath} serving on http://${c.IP}:${running.port}/`);
    const stop = (): void => {
      void running.close().then(() => process.exit(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  } catch (e) {
    exitOnConfigError(e);
  }
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** `hivenode passwd <user> --file F`: reads the password from standard input and writes the user's line. */
export async function runPasswd(user: string, file: string): Promise<void> {
  try {
    const password = (await readStdin()).replace(/\r?\n$/, '');
    if (password.length < 8) throw new ConfigError('the password must have at least 8 characters (read from standard input)');
    const line = await passwdLine(user, password);
    if (existsSync(file)) {
      const kept = readFileSync(file, 'utf8')
        .split(/\r?\n/)
        .filter((l) => l.trim() !== '' && !l.startsWith(`${user}:`));
      writeFileSync(file, `${[...kept, line].join('\n')}\n`, { mode: 0o600 });
    } else {
      appendFileSync(file, `${line}\n`, { mode: 0o600 });
    }
    console.log(`user '${user}' written to ${file}`);
  } catch (e) {
    exitOnConfigError(e);
  }
}
