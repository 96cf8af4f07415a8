/**
 * The one exhaustiveness check: `default: assertNever(msg, 'queue message')` makes a switch over a
 * discriminated union fail to compile when a member is added and not handled, and names at run time
 * the value that got through anyway (from untyped data).
 */
export function assertNever(value: never, what: string): never {
  let shown: string;
  try {
    shown = typeof value === 'object' ? JSON.stringify(value) : String(value);
  } catch {
    shown = String(value);
  }
  throw new Error(`unexpected ${what} ${shown}`);
}
