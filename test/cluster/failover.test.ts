import fs from 'node:fs';
import path from 'node:path';
import type { ClusterRecord } from '../../src/cluster/cluster';
import { isRunning } from '../../src/devstack/processes';
import { AgentClient, eventually, Operator } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startProcess, type DipperProcess } from '../support/processes';
import { connectTemporal } from '../support/temporal';

/**
 * Run by `dipper cluster test` only (DIPPER_TEST_CLUSTER names the
 * cluster's record): a team works through the load balancer while one
 * gateway replica and the worker of the run's host are killed. Every
 * message a call acknowledged arrives exactly once, calls keep being
 * answered, and the run still ends with nothing left running.
 */
const recordFile = process.env.DIPPER_TEST_CLUSTER;
const maybe = recordFile ? describe : describe.skip;

maybe('a cluster losing a worker and a gateway mid-run', () => {
  const record = recordFile ? (JSON.parse(fs.readFileSync(recordFile, 'utf8')) as ClusterRecord) : undefined;
  const clients: AgentClient[] = [];
  const restarted: DipperProcess[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    // The cluster's own stop ends what it started; a worker this test started again is this test's to end.
    await Promise.all(restarted.map((p) => p.kill()));
  });

  it('acknowledges nothing it then loses, and ends cleanly', async () => {
    const rec = record!;
    const operator = new Operator({ gatewayUrl: rec.url, operatorToken: rec.operatorToken });
    const connect = async (token: string) => {
      const c = await AgentClient.connect(rec.url, token);
      clients.push(c);
      return c;
    };
    const started = await operator.request('POST', '/runs', { task: 'Cluster failover.' });
    expect(started.status).toBe(201);
    const runId: string = started.json.run_id;
    const rootId: string = started.json.root.agent_id;
    const root = await connect(started.json.root.agent_token);
    await root.ok('declare_plan', { tasks: ['a', 'b'].map((id) => ({ id, role: `dev-${id}`, skill: 'worker', task: `Do ${id}.` })) });
    const children: { id: string; client: AgentClient }[] = [];
    for (const id of ['a', 'b']) {
      const { agent_id } = await root.ok('spawn_agent', { task_id: id });
      children.push({ id: agent_id, client: await connect((await operator.launch(runId, agent_id)).token) });
    }
    const host: string = (await operator.request('GET', `/runs/${runId}`)).json.host;
    const hostWorker = rec.processes.find((p) => p.name === `worker-${host}`)!;
    const gateway = rec.processes.find((p) => p.name === 'gateway-1')!;
    // Launched in the background after the spawn answered: wait for each pid file.
    const pidFile = (agentId: string) => path.join(hostWorker.dataDir!, 'runs', runId, 'agents', agentId, 'runtime.pid');
    const childPids = await Promise.all(
      children.map((c) => eventually(async () => (fs.existsSync(pidFile(c.id)) ? Number(fs.readFileSync(pidFile(c.id), 'utf8').split(' ')[0]) : undefined), 30_000)),
    );

    // Traffic: each child sends to the root, the root to each child, one after another, retrying what is refused as unavailable.
    const acknowledged = new Map<string, string>();
    let refused = 0;
    let stopTraffic = false;
    const send = async (from: AgentClient, to: string, content: string) => {
      for (;;) {
        const out = await from.call('send_message', { to, content }).catch(() => undefined);
        if (out && !out.isError) {
          acknowledged.set(out.data.message_id, to);
          return;
        }
        refused++;
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const traffic = (async () => {
      for (let n = 0; !stopTraffic; n++) {
        await Promise.all([
          send(children[0].client, rootId, `a${n}`),
          send(children[1].client, rootId, `b${n}`),
          send(root, children[n % 2].id, `r${n}`),
        ]);
      }
    })();

    const untilAcknowledged = (n: number) => eventually(async () => (acknowledged.size >= n ? true : undefined), 60_000, 50);
    await untilAcknowledged(15);
    process.kill(gateway.pid, 'SIGKILL');
    await untilAcknowledged(acknowledged.size + 15);
    process.kill(hostWorker.pid, 'SIGKILL');
    const killedAt = acknowledged.size;
    await untilAcknowledged(killedAt + 15);
    // The host's worker comes back (a supervisor's job in production): it adopts the agents' processes.
    restarted.push(startProcess('worker', hostWorker.env, `${hostWorker.log}.restarted`));
    await untilAcknowledged(acknowledged.size + 15);
    stopTraffic = true;
    await traffic;

    // Every acknowledged message is in its recipient's inbox, once.
    const inboxes = new Map<string, AgentClient>([[rootId, root], ...children.map((c) => [c.id, c.client] as [string, AgentClient])]);
    for (const [agentId, client] of inboxes) {
      const got: string[] = [];
      for (let cursor = 0; ; ) {
        const page = await client.inbox(cursor, 0);
        if (page.messages.length === 0) break;
        got.push(...page.messages.filter((m) => m.kind === 'message').map((m) => m.message_id as string));
        cursor = page.next_cursor;
      }
      const wanted = [...acknowledged].filter(([, to]) => to === agentId).map(([id]) => id);
      expect(new Set(got).size).toBe(got.length);
      expect(got.filter((id) => wanted.includes(id)).sort()).toEqual(wanted.sort());
    }
    process.stderr.write(`cluster failover: ${acknowledged.size} messages acknowledged, ${refused} answers refused and retried\n`);
    for (const pid of childPids) expect(isRunning(pid)).toBe(true);

    // The run ends, and its processes stop on its host, by the worker that adopted them.
    expect((await operator.request('POST', `/runs/${runId}/cancel`, { reason: 'done' })).status).toBe(200);
    const { client, close } = await connectTemporal();
    try {
      await untilNothingRunning(client, hostWorker.dataDir!, runId, 60_000);
    } finally {
      await close();
    }
    for (const pid of childPids) expect(isRunning(pid)).toBe(false);
  }, 240_000);
});
