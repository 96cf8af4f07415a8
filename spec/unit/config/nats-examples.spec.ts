/**
 * The NATS examples (examples/nats) name machines of a real deployment, so they are not run here
 * (spec/adapters/nats runs the same services on loopback); each file still has to parse and every
 * service's parameters compile, so a renamed parameter cannot leave an example behind.
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_DEFINITIONS } from '../../../actors/index.js';
import { loadNodeFile } from '../../../config/node-file.js';
import { certsDir } from '../../certs.js';

const DIR = new URL('../../../examples/nats/', import.meta.url).pathname;

describe('examples/nats node files', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.yaml'));
  it('are there', () =>
    expect(files).to.include.members(['gateway.yaml', 'queue.yaml', 'workers.yaml', 'poller.yaml', 'tls.yaml']));
  for (const file of files) {
    it(`${file} parses, names a NATS hive and compiles every service`, () => {
      const node = loadNodeFile(join(DIR, file), {
        HOSTNAME: 'machine-b',
        HIVENODE_CERTS: certsDir(),
        HIVE_PASSWORD: 'example',
      });
      const hive = new Map(node.hive.values.map(([k, v]) => [k.toUpperCase(), v]));
      expect(hive.get('SERVERHOST')).to.match(/^(nats|tls):\/\//);
      // the hive layer without SERVERAUTH (its file:// secret exists on the machines only), then the service's
      const hiveLayer = { ...node.hive, values: node.hive.values.filter(([k]) => k.toUpperCase() !== 'SERVERAUTH') };
      for (const s of node.services) {
        const layers = [
          hiveLayer,
          { ...s.layer, values: s.layer.values.filter(([k]) => k.toUpperCase() !== 'SQL_PASSWORD') },
        ];
        expect(() => SERVICE_DEFINITIONS[s.kind].compile(layers)).to.not.throw();
      }
    });
  }
});
