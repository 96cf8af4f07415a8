import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { renderReadmeParams, replaceReadmeParams } from '../../../config/readme.js';

describe('README parameter reference', () => {
  it('is generated from the parameter tables (run `npx tsx scripts/update-readme-params.ts` when this fails)', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
    expect(replaceReadmeParams(readme, renderReadmeParams())).to.equal(readme);
  });
});
