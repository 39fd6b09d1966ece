import type { WorkflowHandle } from '@temporalio/client';
import { agentWorkflowId, questionWorkflowId, runWorkflowId } from '../../workflows/ids';
import { closeAll, env, operator, spawn, startRun, task } from '../support/team';
import { connectTemporal } from '../support/temporal';
import { eventually } from '../support/clients';

/**
 * What a person meets in the Temporal UI: every workflow says what it is
 * (summary and details), what it is waiting for (current details), and
 * every query it offers is described and answers with no argument, as the
 * UI's "Run Query" button sends none.
 */
let temporal: Awaited<ReturnType<typeof connectTemporal>>;
beforeAll(async () => {
  temporal = await connectTemporal();
});
afterAll(async () => {
  await closeAll();
  await temporal.close();
});

interface Metadata {
  definition?: { queryDefinitions?: { name: string; description?: string }[] };
  currentDetails?: string;
}

/**
 * A Query asked again when no worker took it in time, as a person clicks Run Query again: on a loaded machine the token
 * registry, which its worker builds from its whole history for every Query (no cache), once missed the server's wait.
 */
async function patiently<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (err) {
      const code = (err as { cause?: { code?: number } }).cause?.code;
      if (code !== 4 || attempt === 3) throw err;
    }
  }
}

async function everyQuery(handle: WorkflowHandle): Promise<Record<string, unknown>> {
  const meta = await patiently(() => handle.query<Metadata>('__temporal_workflow_metadata'));
  const own = (meta.definition?.queryDefinitions ?? []).filter((q) => !q.name.startsWith('__'));
  expect(own.length).toBeGreaterThan(0);
  const answers: Record<string, unknown> = {};
  for (const q of own) {
    expect({ query: q.name, description: q.description?.length ?? 0 }).toEqual({ query: q.name, description: expect.any(Number) });
    expect(q.description?.length).toBeGreaterThan(10);
    answers[q.name] = await patiently(() => handle.query(q.name));
    expect(answers[q.name]).not.toBeUndefined();
  }
  return answers;
}

it('describes every workflow of a run and answers every query with no argument', async () => {
  const { runId, rootId, root } = await startRun(undefined, 'Build the search page.');
  await root.ok('declare_plan', { tasks: [task('a')] });
  const child = await spawn(root, runId, 'a');
  // A question waiting for a person, so a question workflow is open too.
  const asked = root.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Ship?', header: '', multiSelect: false, options: [] }] } }, undefined, {
    timeout: 60_000,
  });
  const qid = await (async () => {
    for (;;) {
      const pending = (await operator.request('GET', `/questions?run=${runId}`)).json.questions;
      if (pending.length > 0) return pending[0].qid as string;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();

  const wf = (id: string) => temporal.client.workflow.getHandle(id);
  const run = wf(runWorkflowId(runId));
  const rootWf = wf(agentWorkflowId(runId, rootId));
  const childWf = wf(agentWorkflowId(runId, child.agentId));
  const question = wf(questionWorkflowId(runId, qid));

  const runAnswers = await everyQuery(run);
  expect(runAnswers.peers).toEqual(expect.arrayContaining([expect.objectContaining({ agent_id: child.agentId })]));
  expect(runAnswers.peer).toMatchObject({ agent_id: rootId });
  const rootAnswers = await everyQuery(rootWf);
  expect(rootAnswers.inbox).toMatchObject({ items: expect.any(Array), status: 'active' });
  expect(rootAnswers.listReady).toEqual({ ready: [] });
  await everyQuery(childWf);
  expect(await everyQuery(question)).toMatchObject({ question: { qid, holder: 'user' } });
  await everyQuery(wf(`tokens/${env.processEnv.DIPPER_TASK_QUEUE ?? 'dipper'}`));

  expect(await (await run.describe()).staticSummary()).toBe('Run: Build the search page.');
  const childDescribed = await childWf.describe();
  expect(await childDescribed.staticSummary()).toBe(`a-engineer (${await childDetailsName(childWf)})`);
  expect(await childDescribed.staticDetails()).toContain('**Task:**');
  expect(await (await question.describe()).staticSummary()).toBe('Question from root: Ship?');
  expect((await question.query<Metadata>('__temporal_workflow_metadata')).currentDetails).toBe('Waiting for a person at the human gateway.');
  expect((await childWf.query<Metadata>('__temporal_workflow_metadata')).currentDetails).toBe('Working.');
  // The root waits on its own question: the line comes from the same account as the agents API's `health`.
  await eventually(async () => ((await rootWf.query<Metadata>('__temporal_workflow_metadata')).currentDetails === `Waiting for the answer to its question ${qid}.` ? true : undefined));

  await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: [], text: 'Yes.' }] });
  await asked;

  // An agent that ended is shown ended: its workflow completes, its last details say so, and its record still reads.
  await root.ok('terminate_child', { agent_id: child.agentId, force: true });
  await eventually(async () => ((await childWf.describe()).status.name === 'COMPLETED' ? true : undefined), 30_000);
  expect((await childWf.query<Metadata>('__temporal_workflow_metadata')).currentDetails).toBe('Ended.');
  expect((await childWf.query<{ status: string }>('inbox')).status).toBe('terminated');
  // Words to it find it closed, and say so.
  expect((await root.fail('send_message', { to: child.agentId, content: 'Still there?' })).code).toBe('recipient_terminated');
  // The run and the root go on.
  expect((await (await run.describe()).status.name)).toBe('RUNNING');
  expect((await root.ok('list_peers', { scope: 'all' })).peers.find((p: { agent_id: string }) => p.agent_id === child.agentId).status).toBe('terminated');
});

async function childDetailsName(handle: WorkflowHandle): Promise<string> {
  const launch = await handle.query<{ identity: { name: string } }>('launch');
  return launch.identity.name;
}
