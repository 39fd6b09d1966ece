/**
 * Records workflow histories for the replay test. Run it against a live
 * stack on the commit whose workflow code should stay replayable:
 *
 *   DIPPER_GATEWAY=http://127.0.0.1:8710 DIPPER_OPERATOR_TOKEN=... TEMPORAL_ADDRESS=127.0.0.1:7233 \
 *     npx tsx test/replay/capture.ts <label>
 *
 * It drives one run through every tool, ends it, and saves the history of
 * each of its workflows under test/replay/histories/<label>/. Histories are
 * evidence from an earlier commit: never re-record them to make replay pass.
 */
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { AgentClient, eventually, Operator } from '../support/clients';

async function main(): Promise<void> {
  const label = process.argv[2];
  const gatewayUrl = process.env.DIPPER_GATEWAY;
  const operatorToken = process.env.DIPPER_OPERATOR_TOKEN;
  if (!label || !gatewayUrl || !operatorToken || !process.env.TEMPORAL_ADDRESS) {
    throw new Error('usage: DIPPER_GATEWAY=... DIPPER_OPERATOR_TOKEN=... TEMPORAL_ADDRESS=... capture.ts <label>');
  }
  const operator = new Operator({ gatewayUrl, operatorToken });
  // Texts over 1 KiB go to the content store (since v7): the run's task, a plan task, messages, reports, a charter.
  const long = (text: string) => `${text} `.padEnd(3000, '.');
  const run = await operator.startRun(long('Record a history of every tool.'));
  const root = await AgentClient.connect(gatewayUrl, run.root.agent_token);
  const agent = async (id: string) => AgentClient.connect(gatewayUrl, (await operator.launch(run.run_id, id)).token);
  const task = (id: string, deps: string[] = []) => ({ id, role: id, skill: 'worker', task: `Do ${id}.`, depends_on: deps });

  await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a']), task('c')] });
  await root.ok('remove_plan');
  await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a']), { ...task('c'), task: long('Do c.'), description: long('The c part.') }, task('d')] });
  const a = await root.ok('spawn_agent', { task_id: 'a' });
  const c = await root.ok('spawn_agent', { task_id: 'c' });
  const childA = await agent(a.agent_id);
  const childC = await agent(c.agent_id);
  await childA.ok('send_message', { to: run.root.agent_id, content: 'hello' });
  await childA.ok('send_message', { to: run.root.agent_id, content: long('hello at length') });
  await childA.ok('list_peers', { scope: 'all' });
  await childA.ok('signal_review', { detail: '[REVIEW REQUIRED] v1' });
  await root.ok('send_message', { to: a.agent_id, content: 'rework please' });
  await childA.ok('signal_review', { detail: long('[REVIEW REQUIRED] v2') });
  await root.ok('list_pending_reviews');
  await root.ok('terminate_child', { agent_id: a.agent_id });
  const inboxA = await childA.inbox(0, 0);
  await childA.ack(inboxA.messages.at(-1).seq);
  await root.ok('list_ready');
  await childC.ok('request_termination', { detail: long('done') });
  await root.ok('terminate_child', { agent_id: c.agent_id, force: true });
  await root.ok('update_plan_task', { task_id: 'd', status: 'done', note: 'by hand' });
  const b = await root.ok('spawn_agent', { task_id: 'b' });
  await root.ok('create_team', {
    name: 'side',
    task: long('side work'),
    roles: [
      { role: 'x', skill: 'worker', description: long('X part.') },
      { role: 'y', skill: 'worker', description: 'Y part.' },
    ],
  });
  const childB = await agent(b.agent_id);
  // Questions (since v12): one answered by the leader, one escalated past the root and answered by a person, one declined.
  const ask = (who: AgentClient, question: string) =>
    who.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question, header: 'Q', multiSelect: false, options: [] }] } }, undefined, { timeout: 120_000 });
  const qidAtRoot = async (question: string) =>
    eventually(async () => {
      const item = (await root.inbox(0, 0)).messages.find((m: { content: string }) => m.content.includes(question));
      return item ? /qid: (q_[A-Za-z0-9_-]+)/.exec(item.content)?.[1] : undefined;
    });
  const waitingForPerson = async (qid: string) =>
    eventually(async () => ((await operator.request('GET', `/questions?run=${run.run_id}`)).json.questions.some((q: { qid: string }) => q.qid === qid) ? true : undefined));
  const asked1 = ask(childB, 'Which port?');
  await root.ok('answer_question', { qid: await qidAtRoot('Which port?'), answers: [{ selected_labels: [], text: '8080' }], reason: 'In the plan.' });
  await asked1;
  const asked2 = ask(childB, 'Ship today?');
  const q2 = await qidAtRoot('Ship today?');
  await root.ok('escalate_question', { qid: q2, reason: 'For the user.' });
  await waitingForPerson(q2);
  await operator.request('POST', `/runs/${run.run_id}/questions/${q2}/answer`, { answers: [{ selected_labels: [], text: 'Yes.' }] });
  await asked2;
  const asked3 = ask(root, 'May I delete the old data?');
  const q3 = await eventually(async () => (await operator.request('GET', `/questions?run=${run.run_id}`)).json.questions[0]?.qid as string | undefined);
  await operator.request('POST', `/runs/${run.run_id}/questions/${q3}/decline`, { reason: 'Not now.' });
  await asked3;
  await childB.ok('signal_review', { detail: '[REVIEW REQUIRED] b' });
  await root.ok('terminate_child', { agent_id: b.agent_id });
  const rootInbox = await root.inbox(0, 0);
  await root.ack(rootInbox.messages.at(-1).seq);
  await root.ok('signal_review', { detail: '[REVIEW REQUIRED] all done' });
  await operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'rework', text: 'one more' });
  await root.ok('request_termination', { detail: 'finished' });
  await operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'termination', verdict: 'approve' });

  // A second run: a deadline (timer), quota reservations, a leader whose subtree ends with it, then a cancel.
  const res = await operator.request('POST', '/runs', { task: 'Record a cancelled run.', deadline_seconds: 3600 });
  const second = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  const root2 = await AgentClient.connect(gatewayUrl, second.root.agent_token);
  await root2.ok('declare_plan', { tasks: [{ id: 'lead', role: 'lead', skill: 'lead', task: 'Lead.', depends_on: [] }] });
  const lead = await root2.ok('spawn_agent', { task_id: 'lead' });
  const leadClient = AgentClient.connect(gatewayUrl, (await operator.launch(second.run_id, lead.agent_id)).token);
  const leader = await leadClient;
  await leader.ok('declare_plan', { tasks: [task('leaf')] });
  await leader.ok('spawn_agent', { task_id: 'leaf' });
  await root2.ok('terminate_child', { agent_id: lead.agent_id, force: true });
  const sentinel = await eventually(async () => (await leader.inbox(0, 0)).messages.find((m: { kind: string }) => m.kind === 'terminate'));
  await leader.ack(sentinel.seq);
  await operator.request('POST', `/runs/${second.run_id}/cancel`, { reason: 'recorded' });

  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS, channelArgs: HISTORY_CHANNEL_ARGS });
  const client = new Client({ connection, namespace: process.env.TEMPORAL_NAMESPACE ?? 'dipper' });

  // A third run: large reports in a burst (event writes cut by bytes), then calls until the root continues as new,
  // which waits for its unwritten events to fit; the run is cancelled after.
  const third = (await operator.request('POST', '/runs', { task: 'Record continue-as-new.', limits: { continue_as_new_events: 100 } })).json;
  const root3 = await AgentClient.connect(gatewayUrl, third.root.agent_token);
  await Promise.all(Array.from({ length: 12 }, (_, i) => root3.ok('signal_review', { detail: `[REVIEW REQUIRED] ${i} `.padEnd(40 * 1024, 'x') })));
  const root3Id = `run/${third.run_id}/agent/${third.root.agent_id}`;
  const executions = async (workflowId: string) => {
    const runs: string[] = [];
    for await (const wf of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) runs.push(wf.runId);
    return runs;
  };
  for (let i = 0; (await executions(root3Id)).length < 2; i++) {
    if (i > 60) throw new Error('the root never continued as new');
    await root3.ok('declare_plan', { tasks: [task('x')] });
    await root3.ok('remove_plan');
  }
  await operator.request('POST', `/runs/${third.run_id}/cancel`, { reason: 'recorded' });
  const out = path.join(__dirname, 'histories', label);
  fs.mkdirSync(out, { recursive: true });
  const closed = (runId: string, least: number) =>
    eventually(async () => {
      const found: string[] = [];
      for await (const wf of client.workflow.list({ query: `DipperRunId = "${runId}"` })) {
        if (wf.status.name === 'RUNNING') return undefined;
        found.push(wf.workflowId);
      }
      return found.length >= least ? found : undefined;
    }, 60_000);
  const ids: string[] = [...(await closed(run.run_id, 7)), ...(await closed(second.run_id, 4))];
  for (const id of ids) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    // Canonical proto3 JSON, the form Worker.runReplayHistory reads back.
    fs.writeFileSync(path.join(out, `${id.replace(/\//g, '_')}.json`), historyToJSON(history));
  }
  // Every execution of the third run's root: the one that continued as new is the point.
  await closed(third.run_id, 1);
  const rootRuns = await executions(root3Id);
  for (const [n, runId] of rootRuns.entries()) {
    const history = await client.workflow.getHandle(root3Id, runId).fetchHistory();
    fs.writeFileSync(path.join(out, `${root3Id.replace(/\//g, '_')}_${n}.json`), historyToJSON(history));
  }
  process.stdout.write(`saved ${ids.length + rootRuns.length} histories to ${out}\n`);
  await Promise.all([root, childA, childB, childC, root2, leader, root3].map((x) => x.close()));
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
