/**
 * A damaged queue store is never silently replaced (README, Reliability): `hivenode run` on a store
 * whose pages are overwritten exits 2 with one line naming the file, and leaves the file as it was.
 */
import { expect } from 'chai';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../temp.js';
import { runNodeToExit, writeNodeFile } from './node-process.js';

describe('a damaged queue store at the start of a node process', function () {
  this.timeout(60_000);

  it('hivenode run exits 2 with one line naming the store file, which is left untouched', async () => {
    const dir = tempDir('hn-damaged-');
    const storeDir = join(dir, 'store', 'queue');
    mkdirSync(storeDir, { recursive: true });
    // a valid SQLite header followed by pages of noise: opens, then fails its integrity check
    const bytes = Buffer.alloc(4096 * 8, 0xa5);
    Buffer.from('SQLite format 3\0').copy(bytes, 0);
    bytes.writeUInt16BE(4096, 16);
    writeFileSync(join(storeDir, 'queue.db'), bytes);
    const file = writeNodeFile(dir, 'node', [`{ service: queue, NAME: queue, PersistPath: ${JSON.stringify(join(dir, 'store'))} }`]);
    const { code, stderr } = await runNodeToExit(file);
    expect(code, stderr).to.equal(2);
    const lines = stderr.trim().split('\n');
    expect(lines, stderr).to.have.length(1);
    expect(lines[0]).to.contain(join(storeDir, 'queue.db')).and.to.contain('damaged');
    expect(readFileSync(join(storeDir, 'queue.db')).equals(bytes)).to.equal(true);
    expect(readdirSync(storeDir).filter((f) => f.includes('.corrupt-'))).to.deep.equal([]);
  });
});
