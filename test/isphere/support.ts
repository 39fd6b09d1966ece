import type { AgentClient } from '../support/clients';
import { connect, env, operator } from '../support/team';

/** The test stack's bridge simulator: its controls, and the bridge itself as Dipper's connector sees it. */
export const sim = {
  async control(method: 'GET' | 'POST', path: string, body?: unknown): Promise<any> {
    const res = await fetch(`${env.isphere.bridgeUrl}/_sim${path}`, {
      method,
      headers: { authorization: `Bearer ${env.isphere.controlToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`sim ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  },
  async bridge(path: string): Promise<any> {
    const res = await fetch(`${env.isphere.bridgeUrl}${path}`, { headers: { authorization: `Bearer ${env.processEnv.DIPPER_ISPHERE_BRIDGE_TOKEN}` } });
    if (!res.ok) throw new Error(`bridge ${path}: ${res.status}`);
    return res.json();
  },
  async deliveries(): Promise<unknown[]> {
    return (await this.control('GET', '/deliveries')).deliveries;
  },
  logIn: (loggedIn: boolean) => sim.control('POST', '/session', { logged_in: loggedIn }),
};

/** A run whose root runs `skill`, connected to the isphere surface. */
export async function isphereAgent(skill = 'lead'): Promise<{ runId: string; rootId: string; isphere: AgentClient }> {
  const res = await operator.request('POST', '/runs', { task: 'Read iSphere.', root_skill: skill });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  const run = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  return { runId: run.run_id, rootId: run.root.agent_id, isphere: await connect(run.root.agent_token, 'isphere') };
}

/** What the test policy (test/fixtures/isphere/policy.json) lets a root lead read (a worker under it also reads g_0005, granted beyond its leader). */
export const readableContact = (id: string) => /^c_(000[1-5]|001\d|002\d|0030)$/.test(id);
export const readableGroup = (id: string) => ['g_0001', 'g_0002', 'g_0003', 'g_0007'].includes(id);

/** Every page of a list, following next_cursor; fails on a cursor that never ends. */
export async function allPages(client: AgentClient, tool: string, args: Record<string, unknown>, list: string): Promise<{ items: any[]; pages: any[] }> {
  const pages: any[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.ok(tool, { ...args, ...(cursor ? { cursor } : {}) });
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
    if (pages.length > 100) throw new Error('more than 100 pages');
  } while (cursor);
  return { items: pages.flatMap((p) => p[list]), pages };
}
