import { readTestEnv } from '../setup/env';
import { AgentClient, eventually, Operator } from './clients';

export const env = readTestEnv();
export const operator = new Operator(env);

export interface Member {
  agentId: string;
  client: AgentClient;
  launch: any;
}

const open: AgentClient[] = [];

/** Connects as an agent; every client opened here is closed by closeAll(). */
export async function connect(token: string, surface: 'beidou' | 'agentteam' | 'isphere' = 'beidou'): Promise<AgentClient> {
  const c = await AgentClient.connect(env.gatewayUrl, token, surface);
  open.push(c);
  return c;
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
}

export async function startRun(limits?: Record<string, number>, task = 'Ship the feature.') {
  const res = await operator.request('POST', '/runs', { task, ...(limits ? { limits } : {}) });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  const run = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  return { runId: run.run_id, rootId: run.root.agent_id, root: await connect(run.root.agent_token) };
}

export function task(id: string, deps: string[] = [], skill = 'worker') {
  return { id, role: `${id}-engineer`, skill, task: `Do ${id}.`, depends_on: deps };
}

/** Spawns the plan task and connects as the new agent, as a `none` runtime driver would. */
export async function spawn(leader: AgentClient, runId: string, taskId: string): Promise<Member & { result: any }> {
  const result = await leader.ok('spawn_agent', { task_id: taskId });
  const launch = await operator.launch(runId, result.agent_id);
  return { agentId: result.agent_id, client: await connect(launch.token), launch, result };
}

/** Reads the inbox until an item matching pred shows up. */
export async function waitForInbox(client: AgentClient, pred: (m: any) => boolean): Promise<any> {
  return eventually(async () => (await client.inbox(0, 0)).messages.find(pred));
}

export async function eventsOf(runId: string, type: string, min = 1): Promise<any[]> {
  return eventually(async () => {
    const events = await operator.events(runId, type);
    return events.length >= min ? events : undefined;
  });
}

/** The child signals review and the leader approves it; the child consumes the sentinel. */
export async function approve(leader: AgentClient, child: Member): Promise<void> {
  await child.client.ok('signal_review', { detail: '[REVIEW REQUIRED] done' });
  await leader.ok('terminate_child', { agent_id: child.agentId });
  const sentinel = await waitForInbox(child.client, (m) => m.kind === 'terminate');
  await child.client.ack(sentinel.seq);
}
