/**
 * Strict mode (README, The REST gateway): POST `{base}/<class>/<operation>`; the body is JSON Data
 * (name → list of strings) or a message with Class, Operation, Data (and Control) members.
 * Class and operation come from the path when it names them, else from the body, else the defaults.
 */
import { BadInputError } from '../../protocol/errors.js';
import type { Message } from '../../protocol/message.js';
import { checkNamePart, emptyMap, validateMessage, validateValueMap } from '../../protocol/message.js';
import { parseJson } from '../../protocol/wire.js';

const MESSAGE_KEYS = new Set(['Class', 'Operation', 'Data', 'Control']);

/** True when a parsed body is a message (has Data and only message members) rather than plain Data. */
function isMessageShaped(body: Record<string, unknown>): boolean {
  const keys = Object.keys(body);
  return keys.includes('Data') && keys.every((k) => MESSAGE_KEYS.has(k));
}

/** Splits the path below the base path into class and operation ('' where absent). */
function classAndOperation(subPath: string): [string, string] {
  const parts = subPath.split('/').filter((p) => p !== '');
  if (parts.length > 2) throw new BadInputError(`path '/${parts.join('/')}' has more than /<class>/<operation>`);
  return [decodePart(parts[0] ?? '', 'Class'), decodePart(parts[1] ?? '', 'Operation')];
}

/**
 * decodeURIComponent whose URIError (a client's malformed %-escape) is a 400, not a 500; a decoded
 * control character (`/ech%00o/x`) is a 400 too.
 */
function decodePart(part: string, what: 'Class' | 'Operation'): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(part);
  } catch {
    throw new BadInputError(`path segment '${part}' has a malformed %-escape`);
  }
  return checkNamePart(decoded, `${what} from the path`);
}

export function strictMessage(subPath: string, body: Buffer, defaults: { cls: string; operation: string }): Message {
  const [pathClass, pathOperation] = classAndOperation(subPath);
  let message: Message;
  if (body.length === 0) {
    message = { Class: '', Operation: '', Control: emptyMap(), Data: emptyMap() };
  } else {
    const parsed = parseJson(body.toString('utf8'), 'request body');
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      isMessageShaped(parsed as Record<string, unknown>)
    ) {
      message = validateMessage(parsed, 'request body');
    } else {
      message = { Class: '', Operation: '', Control: emptyMap(), Data: validateValueMap(parsed, 'request body') };
    }
  }
  message.Class = pathClass || message.Class || defaults.cls;
  message.Operation = pathOperation || message.Operation || defaults.operation;
  return message;
}
