import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import { createLogger, maskSensitive } from '../../../actors/observe/logger.js';
import { sleep } from '../../support/wait.js';

function capture(opts: Parameters<typeof createLogger>[0]): {
  log: ReturnType<typeof createLogger>;
  text: () => Promise<string>;
} {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString()));
  const log = createLogger({ ...opts, stream });
  return { log, text: async () => (await sleep(20), chunks.join('')) };
}

describe('actors/observe/logger', () => {
  it('masks secrets and credentials unless LOGSENSITIVE', async () => {
    const masked = capture({ secrets: ['hunter2-secret'] });
    masked.log.info('connecting with hunter2-secret', { authorization: 'Basic YWxpY2U6cHc=', password: 'x' });
    masked.log.info('header Authorization: Bearer abcdefghijkl and password=topsecret');
    const text = await masked.text();
    expect(text).to.not.contain('hunter2-secret');
    expect(text).to.not.contain('YWxpY2U6cHc=');
    expect(text).to.not.contain('abcdefghijkl');
    expect(text).to.not.contain('topsecret');
    const open = capture({ secrets: ['hunter2-secret'], sensitive: true });
    open.log.info('connecting with hunter2-secret');
    expect(await open.text()).to.contain('hunter2-secret');
    expect(maskSensitive('Basic dXNlcjpwYXNzd29yZA==', [])).to.equal('Basic ***');
  });

  it('writes one JSON object per line with LOGFORMAT JSON, and honours LOGLEVEL', async () => {
    const json = capture({ format: 'JSON', level: 'DEBUG' });
    json.log.debug('visible', { n: 1 });
    json.log.trace('hidden');
    const lines = (await json.text()).trim().split('\n');
    expect(lines).to.have.length(1);
    expect(JSON.parse(lines[0]!)).to.include({ level: 'debug', message: 'visible', n: 1 });
    const text = capture({ format: 'TEXT/DEFAULT', level: 'warn' });
    text.log.info('hidden');
    text.log.warn('shown');
    expect((await text.text()).trim()).to.match(/WARN {2}shown$/);
  });
});
