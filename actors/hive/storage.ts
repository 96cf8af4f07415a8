/**
 * The template storage service (ARCHITECTURE §5): answers `hive://<name>` lookups from a directory.
 * Operation 'get' (Data name) → Data content; 'put' (name, content); 'list' → Data names; 'delete'.
 * Names are plain file names, so a lookup can never leave the directory.
 */
import { mkdir, readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import type { STORAGE_PARAMS } from '../../config/storage.js';
import { BadInputError, NotFoundError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { firstValue, mapOf, resultFromError, success } from '../../protocol/message.js';
import type { DeliveryMsg, RunningService, ServiceContext, ServiceDefinition } from '../../supervisors/service.js';
import { InFlight, serveChannel } from '../../supervisors/service.js';

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

/** Validates a template name: letters, digits, `_ . -`, not starting with a dot. */
export function validateTemplateName(name: string | undefined): string {
  if (name === undefined || !NAME.test(name)) throw new BadInputError(`template name '${name ?? ''}' is not valid: use letters, digits, _ . - (not starting with a dot)`);
  return name;
}

async function handle(dir: string, message: Message): Promise<Result> {
  const op = message.Operation.toLowerCase();
  switch (op) {
    case 'get': {
      const name = validateTemplateName(firstValue(message.Data, 'name'));
      try {
        return success(mapOf({ name: [name], content: [await readFile(join(dir, name), 'utf8')] }));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`template '${name}' does not exist`);
        throw e;
      }
    }
    case 'put': {
      const name = validateTemplateName(firstValue(message.Data, 'name'));
      const content = firstValue(message.Data, 'content');
      if (content === undefined) throw new BadInputError("put needs Data 'content'");
      // write then rename: a reader never sees half a template
      const tmp = join(dir, `.${name}.${process.pid}.tmp`);
      await writeFile(tmp, content);
      await rename(tmp, join(dir, name));
      return success(mapOf({ name: [name] }));
    }
    case 'list':
      return success(mapOf({ names: (await readdir(dir)).filter((n) => NAME.test(n)).sort() }));
    case 'delete': {
      const name = validateTemplateName(firstValue(message.Data, 'name'));
      try {
        await unlink(join(dir, name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`template '${name}' does not exist`);
        throw e;
      }
      return success(mapOf({ name: [name] }));
    }
    default:
      throw new BadInputError(`storage Operation '${message.Operation}' is not known: use get, put, list or delete`);
  }
}

async function start(ctx: ServiceContext<ConfigOf<typeof STORAGE_PARAMS>>): Promise<RunningService> {
  const dir = ctx.config.Directory;
  await mkdir(dir, { recursive: true });
  const inFlight = new InFlight();
  const worker = ctx.runtime.spawn<undefined, DeliveryMsg>(ctx.supervisor, {
    name: 'worker',
    init: () => undefined,
    receive: (state, { delivery }) => {
      delivery.ack();
      inFlight.begin();
      handle(dir, delivery.message)
        .then(delivery.respond, (e: unknown) => delivery.respond(resultFromError(e)))
        .finally(() => inFlight.end());
      return state;
    },
  });
  const subscription = await serveChannel(ctx, worker);
  ctx.log.info(`template storage serving directory '${dir}' on channel '${ctx.inputChannel}'`);
  return {
    async drain(deadlineMs) {
      subscription.close();
      await inFlight.idle(deadlineMs);
    },
    status: () => ({ channel: ctx.inputChannel, directory: dir, inFlight: inFlight.size }),
  };
}

export const storageService: ServiceDefinition<typeof STORAGE_PARAMS> = { info: SERVICES.storage, start };
