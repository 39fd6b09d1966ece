/**
 * Records the workflow histories the replay test replays (test/replay/histories/):
 *
 *   npm run record-histories
 *
 * It starts a stack of its own (the soak's: a Temporal dev server in memory,
 * worker, gateway, Task service and iSphere bridge simulator, on free ports),
 * drives runs through every tool, ends them, saves the history of each of
 * their workflows and of the token registry, and stops the stack. The set
 * covers every workflow type, Signal and Update, and the timer and
 * continue-as-new paths (replay.test.ts checks that it does).
 *
 * Until Dipper's first release no deployment holds a history of its own:
 * change workflows freely and record the set again with the new code
 * (docs/operations.md, "Workflow changes"). After the release the set is
 * frozen and replay.test.ts guards it.
 */
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { HISTORY_CHANNEL_ARGS } from '../../src/ops/replayAll';
import { projectRoot } from '../../src/devstack/dipperProcess';
import { sign, SIGNATURE_HEADER } from '../../src/common/isphere/signature';
import { startSoakStack, type SoakStack } from '../../src/soak/stack';
import { agentWorkflowId, approvalWorkflowId } from '../../workflows/ids';
import { budgetSpentSignal } from '../../workflows/agent/messages';
import { signedAsGateway } from '../support/decisions';
import { approvalQuery, decideUpdate, requestSendUpdate } from '../../workflows/isphere/messages';
import { tokenRegistryId } from '../../src/common/pure/revocations';
import { AgentClient, eventually, Operator } from '../support/clients';
import { updateAdmitted } from '../support/temporal';

/** How long a person has to decide an approval, and to use one, while recording: the expiry timers fire within the run. */
const APPROVAL_SECONDS = 20;
const say = (line: string) => process.stdout.write(`record-histories: ${line}\n`);

async function main(): Promise<void> {
  const out = path.join(__dirname, 'histories');
  // The approval system the stack announces requests to: it only listens.
  const announced: string[] = [];
  const listener = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      announced.push(req.url ?? '');
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const notifyPort = (listener.address() as { port: number }).port;
  const stack = await startSoakStack({
    dataRoot: path.join(projectRoot, '.scratch', 'record-histories'),
    basePort: 45233,
    env: {
      DIPPER_ISPHERE_APPROVAL_TTL_SECONDS: String(APPROVAL_SECONDS),
      DIPPER_ISPHERE_APPROVAL_USE_SECONDS: String(APPROVAL_SECONDS),
      DIPPER_ISPHERE_RECEIPT_SECONDS: '2',
      DIPPER_ISPHERE_APPROVAL_NOTIFY_URL: `http://127.0.0.1:${notifyPort}/announce`,
      DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET: 'record-histories-notify-secret',
      // Agents of skill `reviewer` are processes that exit at once: the runtime's exits and the crash ladder.
      DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'none' }, skills: { reviewer: { kind: 'command', command: [process.execPath, '-e', 'process.exit(3)'] } } }),
    },
  });
  try {
    for (const f of fs.readdirSync(out).filter((name) => name.endsWith('.json'))) fs.rmSync(path.join(out, f));
    const saved = await record(stack, out);
    process.stdout.write(`saved ${saved} histories to ${path.relative(projectRoot, out)} (${announced.length} approvals announced)\n`);
  } finally {
    await stack.stop();
    listener.close();
  }
}

async function record(stack: SoakStack, out: string): Promise<number> {
  say('first run');
  const gatewayUrl = stack.gatewayUrl;
  const operator = new Operator({ gatewayUrl, operatorToken: stack.operatorToken });
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
  // The task board: changes went through a short workflow from v14 until issue 40; now they go straight to the Task API
  // and leave no history, but they still touch the root (its board list is read from the run).
  const board = await AgentClient.connect(gatewayUrl, run.root.agent_token, 'agentteam');
  const keyed = { channel: run.run_id, tasks: [{ title: 'Recorded task', description: long('At length.') }], idempotency_key: 'capture-1' };
  const made = await board.ok('task_create', keyed);
  await board.ok('task_create', keyed);
  const n = made.tasks[0].number;
  await board.ok('task_create', { channel: run.run_id, parent: n, tasks: [{ title: 'Sub one' }, { title: 'Sub two' }] });
  await board.ok('task_update', { channel: run.run_id, number: n, status: 'in_progress' });
  await board.ok('task_set_claim', { channel: run.run_id, numbers: [n], claimed: true });
  await board.ok('task_checkpoint', { channel: run.run_id, number: n, summary: 'Halfway.' });
  await board.fail('task_update', { channel: run.run_id, number: n, title: 'Stale', expected_updated_at: '2020-01-01T00:00:00.000Z' });
  await board.ok('task_delete', { channel: run.run_id, number: n, subtask_mode: 'delete' });
  await board.close();
  await childB.ok('signal_review', { detail: '[REVIEW REQUIRED] b' });
  await root.ok('terminate_child', { agent_id: b.agent_id });
  const rootInbox = await root.inbox(0, 0);
  await root.ack(rootInbox.messages.at(-1).seq);
  await root.ok('signal_review', { detail: '[REVIEW REQUIRED] all done' });
  await operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'rework', text: 'one more' });
  // Since v13 the root's reports are questions to the person: the review above was decided by /root/decision (which
  // withdraws its question); this one is answered in the question, and so is the termination request.
  const personQuestion = async (runId: string, kind: string) =>
    eventually(async () => {
      const qs = (await operator.request('GET', `/questions?run=${runId}`)).json.questions as { qid: string; system: { kind: string } | null }[];
      return qs.find((q) => q.system?.kind === kind)?.qid;
    }, 30_000);
  const answerPerson = (runId: string, qid: string, labels: string[], text: string | null) =>
    operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: labels, text }] });
  await root.ok('signal_review', { detail: long('[REVIEW REQUIRED] again') });
  await answerPerson(run.run_id, await personQuestion(run.run_id, 'root_review'), ['Rework'], 'polish it');
  await root.ok('request_termination', { detail: 'finished' });
  await answerPerson(run.run_id, await personQuestion(run.run_id, 'root_termination'), ['Approve'], null);

  say('second run');
  // A second run: a deadline (timer), quota reservations, a leader whose subtree ends with it, then a cancel.
  const res = await operator.request('POST', '/runs', { task: 'Record a cancelled run.', deadline_seconds: 3600, limits: { max_agents: 4 } });
  const second = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  const root2 = await AgentClient.connect(gatewayUrl, second.root.agent_token);
  await root2.ok('declare_plan', {
    tasks: [
      { id: 'lead', role: 'lead', skill: 'lead', task: 'Lead.', depends_on: [] },
      { id: 'crash', role: 'crash', skill: 'reviewer', task: 'Exit.', depends_on: [] },
      { id: 'over', role: 'over', skill: 'worker', task: 'Past the run.', depends_on: [] },
    ],
  });
  const lead = await root2.ok('spawn_agent', { task_id: 'lead' });
  const leadClient = AgentClient.connect(gatewayUrl, (await operator.launch(second.run_id, lead.agent_id)).token);
  const leader = await leadClient;
  await leader.ok('declare_plan', { tasks: [task('leaf')] });
  await leader.ok('spawn_agent', { task_id: 'leaf' });
  await root2.ok('terminate_child', { agent_id: lead.agent_id, force: true });
  const sentinel = await eventually(async () => (await leader.inbox(0, 0)).messages.find((m: { kind: string }) => m.kind === 'terminate'));
  await leader.ack(sentinel.seq);
  // A member whose process exits at once, three times: resumed, started fresh, then its leader is told.
  const crasher = await root2.ok('spawn_agent', { task_id: 'crash' });
  await eventually(async () => (await root2.inbox(0, 0)).messages.find((m: { content: string }) => m.content.startsWith('[AGENT CRASHED]')), 60_000);
  await root2.ok('terminate_child', { agent_id: crasher.agent_id, force: true });
  // Past the run's four agents: the step refuses, and the leader answers how the spawn ended (spawnOutcome).
  const over = await root2.fail('spawn_agent', { task_id: 'over' });
  if (over.code !== 'quota_exceeded') throw new Error(`the spawn past the run's limit answered ${over.code}`);
  await operator.request('POST', `/runs/${second.run_id}/cancel`, { reason: 'recorded' });

  const connection = await Connection.connect({ address: stack.temporalAddress, channelArgs: HISTORY_CHANNEL_ARGS });
  const client = new Client({ connection, namespace: stack.namespace });

  say('third run');
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
  // Then rounds that spawn, until it continues as new again: it comes due while a spawn's step may still run, and waits.
  for (let i = 0; (await executions(root3Id)).length < 3; i++) {
    if (i > 60) throw new Error('the root never continued as new beside its spawns');
    await root3.ok('declare_plan', { tasks: [task(`x${i}`)] });
    const member = await root3.ok('spawn_agent', { task_id: `x${i}` });
    await root3.ok('terminate_child', { agent_id: member.agent_id, force: true });
    await root3.ok('remove_plan');
  }
  await operator.request('POST', `/runs/${third.run_id}/cancel`, { reason: 'recorded' });

  say('fourth run');
  // A fourth run (since v13): the watchdog's three passes on one-second intervals, each escalation answered by a
  // person, a long question held as a reference, and the root's review and termination approved in their questions.
  const fourth = (await operator.request('POST', '/runs', { task: 'Record the watchdog.', limits: { review_watchdog_seconds: 1, idle_watchdog_seconds: 1, terminate_grace_seconds: 1 } })).json;
  const root4 = await AgentClient.connect(gatewayUrl, fourth.root.agent_token);
  await root4.ok('declare_plan', { tasks: [task('w1'), task('w2')] });
  const w1 = await root4.ok('spawn_agent', { task_id: 'w1' });
  const w2 = await root4.ok('spawn_agent', { task_id: 'w2' });
  const worker1 = await AgentClient.connect(gatewayUrl, (await operator.launch(fourth.run_id, w1.agent_id)).token);
  const worker2 = await AgentClient.connect(gatewayUrl, (await operator.launch(fourth.run_id, w2.agent_id)).token);
  await worker1.ok('signal_review', { detail: '[REVIEW REQUIRED] w1' });
  await answerPerson(fourth.run_id, await personQuestion(fourth.run_id, 'review_overdue'), [], 'Approve w1, please.');
  await answerPerson(fourth.run_id, await personQuestion(fourth.run_id, 'agent_idle'), [], 'Report, w2.');
  // w1 never reads its sentinel: pass C forces it down.
  await root4.ok('terminate_child', { agent_id: w1.agent_id });
  await eventually(async () => ((await operator.events(fourth.run_id, 'terminate.forced')).length > 0 ? true : undefined), 30_000);
  const asked4 = worker2.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: long('A long question?'), header: 'Long', multiSelect: false, options: [] }] } }, undefined, { timeout: 120_000 });
  const q4 = await eventually(async () => {
    const item = (await root4.inbox(0, 0)).messages.find((m: { content: string }) => m.content.includes('A long question?'));
    return item ? /qid: (q_[A-Za-z0-9_-]+)/.exec(item.content)?.[1] : undefined;
  });
  await root4.ok('answer_question', { qid: q4, answers: [{ selected_labels: [], text: 'Short answer.' }], reason: 'Known.' });
  await asked4;
  await worker2.ok('signal_review', { detail: '[REVIEW REQUIRED] w2' });
  await root4.ok('terminate_child', { agent_id: w2.agent_id });
  const sentinel2 = await eventually(async () => (await worker2.inbox(0, 0)).messages.find((m: { kind: string }) => m.kind === 'terminate'));
  await worker2.ack(sentinel2.seq);
  await root4.ok('signal_review', { detail: '[REVIEW REQUIRED] all of it' });
  await answerPerson(fourth.run_id, await personQuestion(fourth.run_id, 'root_review'), ['Approve'], null);
  await root4.ok('request_termination', { detail: 'finished' });
  await answerPerson(fourth.run_id, await personQuestion(fourth.run_id, 'root_termination'), ['Approve'], null);

  say('fifth run');
  // A fifth run (since v15): six root reviews at once. Each newer report withdraws the one before, whose question is
  // still queued, being started, or open (patch `withdraw-before-start`); the person approves the last.
  const fifth = (await operator.request('POST', '/runs', { task: 'Record withdrawn root reviews.' })).json;
  const root5 = await AgentClient.connect(gatewayUrl, fifth.root.agent_token);
  await Promise.all(Array.from({ length: 6 }, (_, i) => root5.ok('signal_review', { detail: `[REVIEW REQUIRED] burst ${i}` })));
  await answerPerson(fifth.run_id, await personQuestion(fifth.run_id, 'root_review'), ['Approve'], null);
  // The model proxy finds the root over budget, so it is stopped and the person asked; their answer restarts it.
  await client.workflow.getHandle(agentWorkflowId(fifth.run_id, fifth.root.agent_id)).signal(budgetSpentSignal, { budget: 'run', measure: 'tokens', used: 10, limit: 10 });
  await answerPerson(fifth.run_id, await personQuestion(fifth.run_id, 'root_stopped'), [], 'Go on.');
  await eventually(async () => ((await operator.events(fifth.run_id, 'agent_restarted')).length > 0 ? true : undefined), 30_000);
  await operator.request('POST', `/runs/${fifth.run_id}/cancel`, { reason: 'recorded' });

  say('sixth run');
  // A sixth run (since v16, with a bridge: DIPPER_ISPHERE_* set on the stack): iSphere approvals. One approved through
  // the operator API and sent, then sent again (answered from its outcome); one rejected; a download and a file send
  // (their host workflows); one decided and sent in one workflow task; and one left pending when the run is cancelled.
  const sixth = (await operator.request('POST', '/runs', { task: 'Record iSphere approvals.' })).json;
  const isphere = await AgentClient.connect(gatewayUrl, sixth.root.agent_token, 'isphere');
  const words = { target_type: 'contact', target_id: 'c_0003', content_text: long('Recorded words.'), idempotency_key: 'recorded' };
  const approved = (await isphere.ok('isphere_send_message', words)).approval.approval_id;
  await operator.request('POST', `/runs/${sixth.run_id}/isphere/approvals/${approved}/approve`, {});
  await isphere.ok('isphere_send_message', { ...words, dry_run: false, approval_id: approved });
  await isphere.ok('isphere_send_message', { ...words, dry_run: false, approval_id: approved });
  const refused = (await isphere.ok('isphere_send_message', { ...words, content_text: 'Not these.' })).approval.approval_id;
  await operator.request('POST', `/runs/${sixth.run_id}/isphere/approvals/${refused}/reject`, { reason: 'recorded' });
  const workspace = path.join(stack.dataDir, 'runs', sixth.run_id, 'workspace', 'isphere');
  const [file] = (await isphere.ok('isphere_receive_files', { conversation_id: 'conv_g_0001' })).files;
  await isphere.ok('isphere_receive_files', { mode: 'download', file_id: file.file_id, message_id: file.message_id, output_dir: path.join(workspace, 'downloads'), dry_run: false });
  fs.mkdirSync(path.join(workspace, 'outbound'), { recursive: true });
  fs.writeFileSync(path.join(workspace, 'outbound', 'recorded.txt'), 'Recorded file.');
  const fileArgs = { target_type: 'contact', target_id: 'c_0003', file_path: path.join(path.resolve(workspace), 'outbound', 'recorded.txt') };
  const fileApproval = (await isphere.ok('isphere_send_file', fileArgs)).approval.approval_id;
  await operator.request('POST', `/runs/${sixth.run_id}/isphere/approvals/${fileApproval}/approve`, {});
  await isphere.ok('isphere_send_file', { ...fileArgs, dry_run: false, approval_id: fileApproval });
  say('decided and sent in one task');
  // A decision and a send that both waited out a dead worker, applied in one workflow task: the send is still made.
  const both = (await isphere.ok('isphere_send_message', { ...words, content_text: 'Both at once.', idempotency_key: 'recorded-both' })).approval;
  const bothHandle = client.workflow.getHandle(approvalWorkflowId(sixth.run_id, both.approval_id));
  const bothView = await bothHandle.query(approvalQuery);
  await stack.killWorker();
  const decided = bothHandle.executeUpdate(decideUpdate, {
    args: [signedAsGateway(stack.tokenSecret, sixth.run_id, both.approval_id, bothView.binding, { approver: 'operator', via: 'api', decision: 'approve' })],
    updateId: 'decide-both',
  });
  decided.catch(() => undefined);
  await updateAdmitted(client, bothHandle.workflowId, 'decide-both');
  const sentBoth = bothHandle.executeUpdate(requestSendUpdate, { args: [{ requester: bothView.requester.agent_id, binding: bothView.binding }], updateId: 'send-both' });
  sentBoth.catch(() => undefined);
  await updateAdmitted(client, bothHandle.workflowId, 'send-both');
  stack.startWorker();
  await decided;
  if ((await sentBoth).result !== 'sent') throw new Error('the send applied with its decision was not made');
  say('webhook approval');
  // Decided by the approval system's signed webhook, the same delivery twice (the second is answered as a repeat).
  const hookWords = { ...words, content_text: 'By webhook.', idempotency_key: 'recorded-webhook' };
  const hooked = (await isphere.ok('isphere_send_message', hookWords)).approval.approval_id;
  const hook = async () => {
    const body = JSON.stringify({ decision: 'approve', approver: 'operator', delivery_id: `record-${hooked}` });
    const path = `/hooks/isphere/approvals/${sixth.run_id}/${hooked}/decision`;
    const res = await fetch(`${gatewayUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: sign(stack.webhookSecret, { method: 'POST', path, body }) },
      body,
    });
    if (res.status !== 200) throw new Error(`webhook decision: ${res.status} ${await res.text()}`);
  };
  await hook();
  await hook();
  await isphere.ok('isphere_send_message', { ...hookWords, dry_run: false, approval_id: hooked });
  say('expiring approvals');
  // Two left to their timers: one nobody decides, one approved and never used.
  await isphere.ok('isphere_send_message', { ...words, content_text: 'Nobody decides.' });
  const unused = (await isphere.ok('isphere_send_message', { ...words, content_text: 'Never used.' })).approval.approval_id;
  await operator.request('POST', `/runs/${sixth.run_id}/isphere/approvals/${unused}/approve`, {});
  const expired = `WorkflowType = 'isphereApprovalWorkflow' AND DipperRunId = '${sixth.run_id}' AND DipperStatus = 'expired'`;
  await eventually(async () => ((await client.workflow.count(expired)).count >= 2 ? true : undefined), (APPROVAL_SECONDS + 30) * 1000, 500);
  await isphere.ok('isphere_send_message', { ...words, content_text: 'Left pending.' });
  await operator.request('POST', `/runs/${sixth.run_id}/cancel`, { reason: 'recorded' });

  const closed = (runId: string, least: number) =>
    eventually(async () => {
      const found: string[] = [];
      for await (const wf of client.workflow.list({ query: `DipperRunId = "${runId}"` })) {
        if (wf.status.name === 'RUNNING') return undefined;
        found.push(wf.workflowId);
      }
      return found.length >= least ? found : undefined;
    }, 60_000);
  say('waiting for the runs to close');
  const ids: string[] = [
    ...(await closed(run.run_id, 7)),
    ...(await closed(second.run_id, 4)),
    ...(await closed(fourth.run_id, 6)),
    ...(await closed(fifth.run_id, 3)),
    ...(await closed(sixth.run_id, 12)),
  ];
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
  // The token registry, still running: every revocation above is a Signal to it.
  const registry = await client.workflow.getHandle(tokenRegistryId('dipper')).fetchHistory();
  fs.writeFileSync(path.join(out, 'token-registry.json'), historyToJSON(registry));
  await Promise.all([root, childA, childB, childC, root2, leader, root3, root4, worker1, worker2, root5, isphere].map((x) => x.close()));
  await connection.close();
  return ids.length + rootRuns.length + 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
