import { Pool } from 'pg';
import { AgentClient, eventually } from '../support/clients';
import { startStack, type Stack } from '../support/stack';

/**
 * A stack whose event log and content store are PostgreSQL
 * (DIPPER_DATABASE_URL): what the gateway writes before an Update, the
 * worker's activities and the readers all meet in the server's tables.
 * Runs where DIPPER_TEST_DATABASE_URL names a server (CI starts one).
 */
const url = process.env.DIPPER_TEST_DATABASE_URL;
const maybe = url ? describe : describe.skip;

maybe('a stack on PostgreSQL', () => {
  let stack: Stack;
  let pool: Pool;
  const clients: AgentClient[] = [];
  beforeAll(async () => {
    stack = await startStack('postgres', 28870, { DIPPER_DATABASE_URL: url! });
    pool = new Pool({ connectionString: url });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await stack?.stop();
    await pool?.end();
  });

  it('keeps events and long texts in the server, and every reader gets the words', async () => {
    const long = (what: string) => `${what} `.padEnd(20_000, what[0]);
    const started = await stack.operator.request('POST', '/runs', { task: long('Ship it') });
    expect(started.status).toBe(201);
    const runId: string = started.json.run_id;
    const root = await AgentClient.connect(stack.gatewayUrl, started.json.root.agent_token);
    clients.push(root);
    await root.ok('declare_plan', { tasks: [{ id: 'a', role: 'a-dev', skill: 'worker', task: long('Build a'), depends_on: [] }] });
    const { agent_id: childId } = await root.ok('spawn_agent', { task_id: 'a' });
    const launch = await stack.operator.launch(runId, childId);
    expect(launch.first_message.split('\n\n[SKILLS]\n')[0].endsWith(long('Build a'))).toBe(true);
    const child = await AgentClient.connect(stack.gatewayUrl, launch.token);
    clients.push(child);
    await child.ok('send_message', { to: started.json.root.agent_id, content: long('hello') });
    await child.ok('signal_review', { detail: long('[REVIEW REQUIRED] done') });

    const inbox = (await root.inbox(0, 0)).messages.map((m: any) => m.content);
    expect(inbox).toEqual([long('hello'), long('[REVIEW REQUIRED] done')]);
    expect((await stack.operator.request('GET', `/runs/${runId}`)).json.task).toBe(long('Ship it'));
    const reported = await eventually(async () => {
      const events = await stack.operator.events(runId, 'completion.reported');
      return events.length > 0 ? events : undefined;
    }, 30_000, 200);
    expect(reported[0].data.detail).toBe(long('[REVIEW REQUIRED] done'));

    // In the server's tables, not in a file of the data folder.
    const pieces = await pool.query('SELECT COUNT(*) AS n FROM dipper_content WHERE run_id = $1', [runId]);
    expect(Number(pieces.rows[0].n)).toBe(4);
    const events = await pool.query('SELECT COUNT(*) AS n FROM dipper_events WHERE run_id = $1', [runId]);
    expect(Number(events.rows[0].n)).toBeGreaterThan(5);
  }, 60_000);
});
