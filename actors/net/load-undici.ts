/**
 * undici, required when a service first needs it rather than imported at start: a node whose HTTP
 * client has sent nothing, or whose gateway has no proxy, never loads it (a seventh of a node's
 * start-up time and about 15 MiB of its memory). Required, not imported, so the caller stays
 * synchronous; it is the same module the static imports elsewhere get.
 */
import { createRequire } from 'node:module';
import type * as undiciModule from 'undici';

let undici: typeof undiciModule | undefined;

export function loadUndici(): typeof undiciModule {
  return (undici ??= createRequire(import.meta.url)('undici') as typeof undiciModule);
}
