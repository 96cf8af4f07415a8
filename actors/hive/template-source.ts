/**
 * Resolution of a TEMPLATE value (README, Services): 'file://<path>' reads a regular file of at most 16 MiB,
 * 'hive://<name>' asks the storage service on the template channel, anything else is the template
 * text itself.
 */
import { statSync } from 'node:fs';
import { isSuccessCode } from '../../protocol/codes.js';
import { HiveError } from '../../protocol/errors.js';
import { firstValue, makeMessage, mapOf } from '../../protocol/message.js';
import { readTemplateFile } from '../../template/template-file.js';
import type { HiveClient } from './client.js';

export interface TemplateSourceOptions {
  /** Absent for a check without a hive (`hivenode check`, a reload's compile): hive:// is then not fetched. */
  hive?: HiveClient;
  /** Channel of the storage service (queue: TemplateChannel, default 'DefaultStorageChannel'). */
  templateChannel: string;
  timeoutMs?: number;
}

/** Error of a template that cannot be fetched: carries the Code the hive or file system gave. */
class TemplateSourceError extends HiveError {
  override readonly name = 'TemplateSourceError';
  override readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.code = code;
  }
}

/** The template text a TEMPLATE value stands for. */
export async function resolveTemplateSource(value: string, opts: TemplateSourceOptions): Promise<string> {
  if (value.startsWith('file://')) return readTemplateFile(value.slice('file://'.length));
  if (value.startsWith('hive://')) {
    const name = value.slice('hive://'.length);
    if (!opts.hive)
      throw new TemplateSourceError(
        `template 'hive://${name}' is fetched from the hive at start, not checked here`,
        503,
      );
    const bucket = opts.hive.templateBucket(opts.templateChannel);
    if (bucket) {
      const content = await (await bucket).get(name);
      if (content === undefined)
        throw new TemplateSourceError(`template 'hive://${name}' is not in bucket '${opts.templateChannel}'`, 404);
      return content;
    }
    const result = await opts.hive.call(
      opts.templateChannel,
      makeMessage({ Class: 'storage', Operation: 'get', Data: mapOf({ name: [name] }) }),
      opts.timeoutMs ?? 10_000,
    );
    if (!isSuccessCode(result.Code))
      throw new TemplateSourceError(
        `template 'hive://${name}' from channel '${opts.templateChannel}': ${result.Message}`,
        result.Code,
      );
    const content = firstValue(result.Data, 'content');
    if (content === undefined)
      throw new TemplateSourceError(`template 'hive://${name}': the storage answer has no content`, 502);
    return content;
  }
  return value;
}

/**
 * A line for an inline template that is the path of a file that exists (`Template: ./cmd.tmpl`
 * without `file://`): the text itself is then the template, renders to nothing, and every call would
 * fail later with a reason that does not point here. Undefined when the value is anything else.
 */
export function pathLikeTemplateWarning(param: string, value: string): string | undefined {
  const text = value.trim();
  if (
    text === '' ||
    text.startsWith('file://') ||
    text.startsWith('hive://') ||
    text.includes('\n') ||
    text.includes('{{')
  )
    return undefined;
  try {
    if (!statSync(text).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return `${param} '${text}' is read as the template text itself, yet it names a file that exists: write ${param}: file://${text} to use the file`;
}
