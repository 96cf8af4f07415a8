/**
 * examples/gateway/front-door.yaml runs as its comments say: the node file is started as written (only
 * its port moved to a free one and its files named from the repository root), and every curl line of
 * its header is run with bash, in order, answering as its comment promises: the Code and Message of
 * a Result, the preflight's status and origin, the OpenAPI document's paths.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { RunningExample } from './example-node.js';
import { headerShell, startExample } from './example-node.js';

const EXAMPLES = new URL('../../examples/gateway/', import.meta.url).pathname;

describe('examples/gateway/front-door.yaml (Schemas, Cors, OpenAPI)', function () {
  this.timeout(60_000);
  let example: RunningExample | undefined;
  after(async () => {
    await example?.node.kill('SIGTERM');
  });

  it('starts as written and answers every curl line of its header as its comments say', async () => {
    example = await startExample(`${EXAMPLES}front-door.yaml`, 'G', 8087, (text) =>
      text.replace(/Port: 8087/, 'Port: 0').replace(/examples\/gateway\//g, EXAMPLES),
    );
    const { lines } = headerShell(example.text, 'G', (t) => t);
    expect(lines.map((l) => l.code)).to.deep.equal([200, 400, 403, 204, 200]);
    const url = /^# {3}G="(.*)"$/m.exec(example.text)![1]!.replace('8087', String(example.node.port));
    const run = (line: string): string => execFileSync('bash', ['-c', `G="${url}"; ${line}`], { encoding: 'utf8' });
    for (const { line, code, comment } of lines) {
      const out = run(line);
      if (line.includes('-X OPTIONS')) {
        expect(out, line).to.match(new RegExp(`^HTTP/1\\.1 ${code} `));
        const origin = /Access-Control-Allow-Origin: (\S+)/.exec(comment)![1]!;
        expect(out.toLowerCase(), line).to.contain(`access-control-allow-origin: ${origin}`);
        continue;
      }
      const json = JSON.parse(out) as Record<string, unknown>;
      if (line.includes('openapi.json')) {
        expect(json.openapi, line).to.equal('3.1.0');
        const paths = comment.slice(comment.indexOf(': ', comment.indexOf('document')) + 2).split(', ');
        expect(Object.keys(json.paths as object).sort(), line).to.deep.equal(paths.sort());
        continue;
      }
      expect(json.Code, `${line}: ${out}`).to.equal(code);
      if (code === 200) expect(json.Message, line).to.equal('Success');
      else if (code === 400) {
        // the failing fields, in whatever order the schema's keywords are checked
        const [head, fields] = [
          comment.slice(0, comment.indexOf(': ') + 2),
          comment.slice(comment.indexOf(': ') + 2).split('; '),
        ];
        expect(json.Message, line).to.satisfy((m: string) => m.startsWith(head));
        expect((json.Data as { errors: string[] }).errors, line).to.have.members(fields);
      } else expect(json.Message, line).to.equal(comment);
    }
  });
});
