/**
 * Regenerates the parameter reference in README.md from the parameter tables
 * (`npx tsx scripts/update-readme-params.ts`); a unit test fails when the README is out of date.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { renderReadmeParams, replaceReadmeParams } from '../config/readme.js';
import { createLogger } from '../actors/observe/logger.js';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = replaceReadmeParams(before, renderReadmeParams());
if (after !== before) writeFileSync(path, after);
createLogger({ level: 'info', stream: process.stdout }).info(
  after === before ? 'README parameter reference is up to date' : 'README parameter reference updated',
);
