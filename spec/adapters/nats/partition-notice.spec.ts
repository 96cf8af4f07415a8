/**
 * A node whose nats-server is cut off from the network notices it (README, The hive): the node runs
 * on one host of a netns lab (spec/support/netns.ts) connected to the server of another host; that host
 * is cut off (its link down: the server runs on, the TCP connection goes silent rather than closed). The
 * node's client pings every 2 s and gives the connection up after 3 unanswered pings, so it logs the
 * disconnection within seconds — with the NATS client's defaults (2 minutes × 2) it went on waiting for
 * answers that could not come for the whole cut.
 */
import { expect } from 'chai';
import type { NodeProcess } from '../../reliability/node-process.js';
import { startNodeProcess, writeNodeFile } from '../../reliability/node-process.js';
import type { NetnsLab } from '../../support/netns.js';
import { netnsLab } from '../../support/netns.js';
import { netnsNatsCluster, skipWithoutNetns } from '../../support/netns-nats.js';
import { tempDir } from '../../temp.js';
import type { NatsCluster } from './cluster.js';
import { clusterHive } from '../../reliability/node-process.js';
import { sleep } from '../../support/wait.js';

describe('the NATS hive notices a server cut off from the network', function () {
  this.timeout(90_000);
  let lab: NetnsLab | undefined;
  let cluster: NatsCluster | undefined;
  let node: NodeProcess | undefined;
  before(function () {
    skipWithoutNetns(this);
  });
  after(async () => {
    await node?.kill('SIGKILL');
    await cluster?.stop();
    await lab?.destroy();
  });

  it('a node connected to the cut-off server logs the disconnection within 10 s', async () => {
    lab = netnsLab(['a', 'b', 'c']);
    cluster = await netnsNatsCluster(lab);
    const dir = tempDir('hn-netns-notice-');
    // the node on host b knows only host a's server: it cannot move elsewhere, so what it logs is the notice alone
    const hive = clusterHive(cluster, 0, dir).replace(
      /SERVERHOST: "[^"]*"/,
      `SERVERHOST: "${cluster.servers[0]!.url}"`,
    );
    const file = writeNodeFile(dir, 'node', ['{service: echo, NAME: work}'], hive);
    node = await startNodeProcess(file, {
      ready: /echo listening on channel 'work'/,
      spawner: (c, a, o) => lab!.spawn(lab!.hosts[1]!, c, a, o),
    });
    const cutAt = Date.now();
    lab.cut(lab.hosts[0]!);
    while (!node.output().includes('hive disconnected') && Date.now() - cutAt < 30_000) await sleep(50);
    const noticed = Date.now() - cutAt;
    expect(
      noticed,
      `ms from the cut until the node noticed (${node.output().includes('hive disconnected') ? 'noticed' : 'never noticed within 30 s'})`,
    ).to.be.below(10_000);
  });
});
