/**
 * The console's HTTP plumbing: answers (HTML, JSON, redirects, errors with the Code of their typed
 * error) and the body of an action, from a form (pages, no JavaScript needed) or JSON (scripts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BadInputError, TooLargeError, codeOf, describeError } from '../../protocol/errors.js';
import type { ValueMap } from '../../protocol/message.js';
import { emptyMap, validateValueMap } from '../../protocol/message.js';
import type { ActionInput } from './queue-commands.js';
import { CSRF_FIELD } from './operators.js';

const MAX_BODY = 1 << 20;

/** Headers every answer carries: nothing cached, no framing by other sites, no foreign scripts. */
export const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
};

export function send(
  res: ServerResponse,
  code: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, { ...SECURITY_HEADERS, 'content-type': type, ...headers }).end(body);
}

export const sendHtml = (res: ServerResponse, code: number, body: string, headers: Record<string, string> = {}): void =>
  send(res, code, 'text/html; charset=utf-8', body, headers);
export const sendJson = (
  res: ServerResponse,
  code: number,
  value: unknown,
  headers: Record<string, string> = {},
): void => send(res, code, 'application/json; charset=utf-8', JSON.stringify(value), headers);

/** A failure as JSON `{Code, Message}`, with the Code of its typed error (401 asks for Basic credentials). */
export function sendError(res: ServerResponse, error: unknown, realm?: string): void {
  const code = codeOf(error);
  const headers: Record<string, string> =
    code === 401 && realm ? { 'www-authenticate': `Basic realm="${realm}", charset="UTF-8"` } : {};
  sendJson(res, code, { Code: code, Message: describeError(error) }, headers);
}

export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, { ...SECURITY_HEADERS, location }).end();
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new TooLargeError(`the request body is over ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** An origin no request can name: a `back` that resolves against it to anywhere else leaves the console. */
const OWN = 'http://console.invalid';

/**
 * The path, query and fragment `back` resolves to on the console's own origin, or undefined when it
 * resolves elsewhere. Resolved as a browser resolves a Location (WHATWG URL): `//evil.example`,
 * `/\evil.example/b` and `/\t/evil.example/c` are other hosts there, whatever a pattern of the text says.
 */
function pathHere(back: string): string | undefined {
  let url: URL;
  try {
    url = new URL(back, `${OWN}/`);
  } catch {
    return undefined;
  }
  return url.origin === OWN ? `${url.pathname}${url.search}${url.hash}` : undefined;
}

/** Where to send the browser back to after signing in: `back` on the console, else `/`. */
export const ownPath = (back: string): string => pathHere(back) ?? '/';

/** An action's body: its input, the CSRF token a form sent, where a form wants to go back to (a path of the console: pathHere; none when it leads elsewhere), and whether it came from a form. */
export interface ActionBody {
  input: ActionInput;
  csrf?: string;
  back?: string;
  form: boolean;
}

function jsonOf(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new BadInputError(`${where} is not valid JSON: ${describeError(e)}`);
  }
}

function dataOf(text: string, where: string): ValueMap {
  return text.trim() === '' ? emptyMap() : validateValueMap(jsonOf(text, where), where);
}

/** Reads a form (fields are controls, `Data` a JSON object, `csrf`, `back`) or a JSON body `{Control, Data}`. */
export function parseActionBody(contentType: string | undefined, text: string): ActionBody {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(text);
    const control = emptyMap();
    let data = emptyMap();
    let csrf: string | undefined;
    let back: string | undefined;
    for (const [k, v] of form) {
      if (k === CSRF_FIELD) csrf = v;
      else if (k === 'back') back = v;
      else if (k === 'Data') data = dataOf(v, 'Data');
      // a field given again (the checked entries of a list: key=a&key=b) keeps every value
      else if (v.trim() !== '') control[k] = [...(control[k] ?? []), v];
    }
    return {
      input: { control, data },
      form: true,
      ...(csrf === undefined ? {} : { csrf }),
      ...(back && pathHere(back) !== undefined ? { back: pathHere(back)! } : {}),
    };
  }
  if (type === 'application/json' || (type === '' && text.trim() === '')) {
    const body = text.trim() === '' ? {} : jsonOf(text, 'the body');
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw new BadInputError('the body must be a JSON object {"Control": {...}, "Data": {...}}');
    const { Control, Data, ...rest } = body as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (extra.length)
      throw new BadInputError(`unknown body field '${extra[0]}': send {"Control": {...}, "Data": {...}}`);
    return {
      input: { control: validateValueMap(Control, 'Control'), data: validateValueMap(Data, 'Data') },
      form: false,
    };
  }
  throw new BadInputError(`content-type '${type}' is not accepted: send a form or application/json`);
}
