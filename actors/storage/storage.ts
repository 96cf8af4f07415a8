/**
 * The template storage service (docs/ARCHITECTURE.md, The hive): answers `hive://<name>` lookups
 * from a directory. Operation 'get' (Data name) → Data content; 'put' (name, content); 'list' →
 * Data names; 'delete'. Names are plain file names, and a symbolic link is followed only while its
 * real path stays inside the directory, so a lookup can never leave it.
 */
import { readFile, readdir, realpath, rename, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { ConfigOf } from '../../config/params.js';
import { SERVICES } from '../../config/registry.js';
import { compilerFor } from '../../config/resolve.js';
import { STORAGE_PARAMS } from '../../config/storage.js';
import { BadInputError, ForbiddenError, NotFoundError } from '../../protocol/errors.js';
import type { Message, Result } from '../../protocol/message.js';
import { firstValue, mapOf, success } from '../../protocol/message.js';
import type { RunningService, ServiceContext } from '../service/context.js';
import { defineService } from '../service/context.js';
import { handleAsync, serve } from '../service/serve.js';
import { makeDirectory } from '../shared/make-directory.js';

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

/** Validates a template name: letters, digits, `_ . -`, not starting with a dot. */
export function validateTemplateName(name: string | undefined): string {
  if (name === undefined || !NAME.test(name))
    throw new BadInputError(
      `template name '${name ?? ''}' is not valid: use letters, digits, _ . - (not starting with a dot)`,
    );
  return name;
}

/**
 * The content of template `name` in `dir` (a real path, no links in it). A symbolic link someone
 * placed in the directory is followed only when its real path is inside the directory: one to
 * /etc/passwd is refused with 403 (not 404: `list` shows the name, so it does exist; the message
 * names the cause but not the link's target). The file is read by its real path, so swapping the
 * link between the check and the read cannot redirect the read.
 */
async function readTemplate(dir: string, name: string): Promise<string> {
  try {
    const real = await realpath(join(dir, name));
    const rel = relative(dir, real);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw new ForbiddenError(
        `template '${name}' is a symbolic link leading outside the template directory; only files inside it are served`,
      );
    }
    return await readFile(real, 'utf8');
  } catch (e) {
    // ENOENT: no such name, or a link whose target is gone
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`template '${name}' does not exist`);
    throw e;
  }
}

async function handle(dir: string, message: Message): Promise<Result> {
  const op = message.Operation.toLowerCase();
  switch (op) {
    case 'get': {
      const name = validateTemplateName(firstValue(message.Data, 'name'));
      return success(mapOf({ name: [name], content: [await readTemplate(dir, name)] }));
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
        if ((e as NodeJS.ErrnoException).code === 'ENOENT')
          throw new NotFoundError(`template '${name}' does not exist`);
        throw e;
      }
      return success(mapOf({ name: [name] }));
    }
    default:
      throw new BadInputError(`storage Operation '${message.Operation}' is not known: use get, put, list or delete`);
  }
}

async function start(ctx: ServiceContext<ConfigOf<typeof STORAGE_PARAMS>>): Promise<RunningService> {
  makeDirectory(ctx.config.Directory, 'Directory');
  // the directory's own real path: Directory may itself be (or pass through) a link
  const dir = await realpath(ctx.config.Directory);
  const running = await serve(ctx, {
    worker: 'worker',
    handle: handleAsync((message) => handle(dir, message)),
    status: () => ({ directory: dir }),
  });
  ctx.log.info(`template storage serving directory '${dir}' on channel '${ctx.inputChannel}'`);
  return running;
}

export const storageService = defineService(SERVICES.storage, compilerFor('storage', STORAGE_PARAMS), start);
