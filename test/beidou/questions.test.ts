import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import path from 'node:path';
import { AgentClient, eventually } from '../support/clients';
import { startProcess, waitForHttp } from '../support/processes';
import { stackPort } from '../support/stack';
import { readTestEnv, testDataRoot } from '../setup/env';
import { inboxQuery } from '../../workflows/agent/messages';
import { agentWorkflowId, questionWorkflowId } from '../../workflows/ids';
import { connectTemporal } from '../support/temporal';
import { closeAll, eventsOf, operator, spawn, startRun, task, waitForInbox, type Member } from '../support/team';

afterAll(closeAll);

const choose = {
  question: 'Which database?',
  header: 'Database',
  multiSelect: false,
  options: [
    { label: 'PostgreSQL', description: 'Shared, several hosts', value: 'pg' },
    { label: 'SQLite', description: 'One file, one host' },
  ],
};
const why = { question: 'Why?', header: '', multiSelect: false, options: [] };
const features = {
  question: 'Which features?',
  header: 'Scope',
  multiSelect: true,
  options: [
    { label: 'Search', description: '' },
    { label: 'Export', description: '' },
    { label: 'Other', description: 'Say which', requires_text: true },
  ],
};

/** ask_user as a runtime sends it: the official client, no timeout of its own unless given. */
function ask(client: AgentClient, args: Record<string, unknown>, opts: { timeout?: number; onprogress?: () => void } = {}) {
  return client.mcp.callTool({ name: 'ask_user', arguments: args }, undefined, {
    timeout: opts.timeout ?? 120_000,
    ...(opts.onprogress ? { onprogress: opts.onprogress, resetTimeoutOnProgress: true } : {}),
  }) as Promise<{ isError?: boolean; structuredContent?: any; content: { type: string; text: string }[] }>;
}

const errorOf = (res: { content: { text: string }[] }) => JSON.parse(res.content[0].text).error;
const qidIn = (item: { content: string }) => /qid: (q_[A-Za-z0-9_-]+)/.exec(item.content)?.[1];

/** A run of three levels: root, a leader (A) under it, and a member (B) under A. */
async function threeLevels(): Promise<{ runId: string; rootId: string; root: AgentClient; a: Member; b: Member }> {
  const { runId, rootId, root } = await startRun();
  await root.ok('declare_plan', { tasks: [task('a')] });
  const a = await spawn(root, runId, 'a');
  await a.client.ok('declare_plan', { tasks: [task('b')] });
  const b = await spawn(a.client, runId, 'b');
  return { runId, rootId, root, a, b };
}

describe('ask_user', () => {
  it('climbs the chain one hop at a time and is answered by a person at the top', async () => {
    const { runId, root, a, b } = await threeLevels();
    const asked = ask(b.client, { questions: [choose, why], context: 'We ship Friday.' });

    const atA = await waitForInbox(a.client, (m) => m.kind === 'system' && m.content.startsWith('[INBOX QUESTION]'));
    const qid = qidIn(atA)!;
    expect(atA.content).toContain('Which database?');
    expect(atA.content).toContain('context: We ship Friday.');
    expect(await a.client.ok('escalate_question', { qid, reason: 'Not my call.' })).toEqual({ ok: true, qid, new_holder: expect.stringMatching(/^ag_/) });
    // Passed on: A holds it no more.
    expect((await a.client.fail('escalate_question', { qid, reason: 'again' })).code).toBe('stale');

    const atRoot = await waitForInbox(root, (m) => m.kind === 'system' && m.content.includes(qid));
    expect(atRoot.content).toContain(`escalated by ${a.agentId}`);
    expect(await root.ok('escalate_question', { qid, reason: 'The user decides.' })).toEqual({ ok: true, qid, new_holder: null });

    // The list is found through Temporal's visibility, which follows the workflow's own write by up to seconds on a busy machine.
    const waiting = await waitForQuestion(runId);
    expect(waiting.map((q: any) => q.qid)).toEqual([qid]);
    expect(waiting[0]).toMatchObject({ asker_id: b.agentId, holder: 'user', status: 'pending', questions: [choose, why], context: 'We ship Friday.' });
    expect(waiting[0].chain).toEqual([a.agentId, expect.stringMatching(/^ag_/), 'user']);

    // Wrong answers are refused naming the field; the question stays pending.
    const wrong = await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: ['MySQL'], text: null }, { selected_labels: [], text: 'x' }] });
    expect(wrong.status).toBe(409);
    expect(wrong.json.error).toMatchObject({ code: 'invalid_input', field: 'answers[0].selected_labels' });
    const short = await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [{ selected_labels: ['SQLite'], text: null }] });
    expect(short.json.error.code).toBe('answer_count_mismatch');

    const answers = [
      { selected_labels: ['PostgreSQL'], text: null },
      { selected_labels: [], text: 'Two hosts next month.' },
    ];
    const answered = await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers });
    expect(answered.json).toEqual({ ok: true, qid });
    // The same answer again, as from a person whose first answer's reply was lost: it counted, once. Another is refused.
    expect((await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers })).json).toEqual({ ok: true, qid, already: true });
    const other = await operator.request('POST', `/runs/${runId}/questions/${qid}/answer`, { answers: [answers[0], { selected_labels: [], text: 'One host.' }] });
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe('unknown_qid');
    const res = await asked;
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({
      answers: [
        { selected_labels: ['PostgreSQL'], selected_values: ['pg'], text: null },
        { selected_labels: [], selected_values: [], text: 'Two hosts next month.' },
      ],
      answer_text: 'Database: PostgreSQL\nTwo hosts next month.',
    });
    const answeredEvents = await eventsOf(runId, 'question_answered');
    expect(answeredEvents).toHaveLength(1);
    const [event] = answeredEvents;
    expect(event.data).toMatchObject({ qid, by: 'operator operator', hops: 3 });
  });

  it('is answered by the leader who holds it, and only by that leader', async () => {
    const { runId, root, a, b } = await threeLevels();
    const asked = ask(b.client, { questions: [features] });
    const qid = qidIn(await waitForInbox(a.client, (m) => m.content.startsWith('[INBOX QUESTION]')))!;

    expect((await root.fail('answer_question', { qid, answers: [{ selected_labels: ['Search'], text: null }], reason: 'mine' })).code).toBe('not_holder');
    expect((await root.fail('escalate_question', { qid, reason: 'mine' })).code).toBe('not_holder');
    expect((await a.client.fail('answer_question', { qid, answers: [], reason: 'r' })).code).toBe('invalid_input');
    expect((await a.client.fail('answer_question', { qid: 'q_nothing_here', answers: [{ selected_labels: [], text: 'x' }], reason: 'r' })).code).toBe('unknown_qid');
    const other = await a.client.fail('answer_question', { qid, answers: [{ selected_labels: ['Other'], text: null }], reason: 'r' });
    expect(other).toMatchObject({ code: 'invalid_input', field: 'answers[0].text' });

    expect(await a.client.ok('answer_question', { qid, answers: [{ selected_labels: ['Search', 'Other'], text: 'Tags' }], reason: 'The plan says so.' })).toEqual({ ok: true, qid });
    expect((await asked).structuredContent).toEqual({
      answers: [{ selected_labels: ['Search', 'Other'], selected_values: ['Search', 'Other'], text: 'Tags' }],
      answer_text: 'Scope: Search, Other: Tags',
    });
    // Over: nothing pending under that id any more.
    expect((await a.client.fail('answer_question', { qid, answers: [{ selected_labels: ['Search'], text: null }], reason: 'again' })).code).toBe('unknown_qid');
    // The gateway told the holder at once (an Update the holder's history shows, so its long poll woken after it asks
    // no task in flight) and the question's workflow told it too: once the workflow's word has arrived, the holder's
    // inbox still holds the question once.
    const { client: temporal, close } = await connectTemporal();
    try {
      await eventually(async () => {
        const history = await temporal.workflow.getHandle(questionWorkflowId(runId, qid)).fetchHistory();
        return history.events?.some((e) => e.externalWorkflowExecutionSignaledEventAttributes?.workflowExecution?.workflowId === agentWorkflowId(runId, a.agentId)) || undefined;
      });
      const held = await temporal.workflow.getHandle(agentWorkflowId(runId, a.agentId)).fetchHistory();
      const put = held.events?.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'putSystemMessage') ?? [];
      expect(put).toHaveLength(1);
    } finally {
      await close();
    }
    expect((await a.client.inbox(0, 0)).messages.filter((m: { content: string }) => m.content.includes(qid))).toHaveLength(1);
    expect((await a.client.fail('escalate_question', { qid, reason: 'late' })).code).toBe('stale');
  });

  it('asked again in the same words once the first asking has closed, reaches its holder again', async () => {
    // A replica that keeps an answered question open for a second only (it names that time in each question it starts).
    const port = stackPort(28745);
    const url = `http://127.0.0.1:${port}`;
    const env = readTestEnv();
    const replica = startProcess('gateway', { ...env.processEnv, DIPPER_PORT: String(port), DIPPER_QUESTION_REATTACH_SECONDS: '1' }, path.join(testDataRoot, 'questions-reattach-gateway.log'));
    const { client: temporal, close } = await connectTemporal();
    try {
      await waitForHttp(`${url}/healthz`);
      const { runId, root } = await startRun();
      await root.ok('declare_plan', { tasks: [task('a')] });
      const a = await spawn(root, runId, 'a');
      // Asker and holder on the replica: the first answer is handed to the waiting call in the process, and the second
      // asking must not take it for its own.
      const asker = await AgentClient.connect(url, a.launch.token, 'beidou');
      const holder = await AgentClient.connect(url, root.token, 'beidou');
      try {
        for (const round of [1, 2]) {
          const asked = ask(asker, { questions: [why] });
          // Each asking is a new item in the holder's inbox; the first round's was acknowledged below.
          const item = await waitForInbox(root, (m) => m.kind === 'system' && m.content.startsWith('[INBOX QUESTION]'));
          const qid = qidIn(item)!;
          await root.ack(item.seq);
          await holder.ok('answer_question', { qid, answers: [{ selected_labels: [], text: `Round ${round}.` }], reason: 'I know this.' });
          expect((await asked).structuredContent.answer_text).toBe(`Round ${round}.`);
          // The asking is over once its workflow has closed: only then is the same call a new asking.
          await eventually(async () => ((await temporal.workflow.getHandle(questionWorkflowId(runId, qid)).describe()).status.name === 'COMPLETED' ? true : undefined), 30_000);
        }
      } finally {
        await Promise.all([asker.close(), holder.close()].map((closed) => closed.catch(() => undefined)));
      }
    } finally {
      await close();
      await replica.kill();
    }
  });

  it("is answered two hops up by the asker's leader's leader, once passed on", async () => {
    const { root, a, b } = await threeLevels();
    const asked = ask(b.client, { questions: [choose] });
    const qid = qidIn(await waitForInbox(a.client, (m) => m.content.startsWith('[INBOX QUESTION]')))!;
    await a.client.ok('escalate_question', { qid, reason: 'The root knows.' });
    await waitForInbox(root, (m) => m.content.includes(`qid: ${qid}`));
    // Passed on: A may no longer answer it; the root may.
    expect((await a.client.fail('answer_question', { qid, answers: [{ selected_labels: ['SQLite'], text: null }], reason: 'late' })).code).toBe('not_holder');
    expect(await root.ok('answer_question', { qid, answers: [{ selected_labels: ['SQLite'], text: null }], reason: 'One host for now.' })).toEqual({ ok: true, qid });
    expect((await asked).structuredContent.answer_text).toBe('Database: SQLite');
  });

  it('refuses a malformed question naming the sub-question and field', async () => {
    const { root } = await startRun();
    const long = await root.fail('ask_user', { questions: [{ ...choose, header: 'Thirteen char' }] });
    expect(long).toMatchObject({ code: 'invalid_input', field: 'questions[0].header' });
    const one = await root.fail('ask_user', { questions: [why, { ...choose, options: [choose.options[0]] }] });
    expect(one).toMatchObject({ code: 'invalid_input', field: 'questions[1].options' });
    expect((await root.fail('ask_user', { questions: [] })).field).toBe('questions');
    expect((await root.fail('ask_user', { questions: [why, why, why, why, why] })).field).toBe('questions');
  });

  it("from the root goes straight to the person, who may decline", async () => {
    const { runId, root } = await startRun();
    const asked = ask(root, { questions: [why] });
    const [q] = await waitForQuestion(runId);
    expect(q.chain).toEqual(['user']);
    const declined = await operator.request('POST', `/runs/${runId}/questions/${q.qid}/decline`, { reason: 'Out of scope.' });
    expect(declined.json).toEqual({ ok: true, qid: q.qid });
    expect((await operator.request('POST', `/runs/${runId}/questions/${q.qid}/decline`, { reason: 'Out of scope.' })).json).toEqual({ ok: true, qid: q.qid, already: true });
    expect((await operator.request('POST', `/runs/${runId}/questions/${q.qid}/decline`, { reason: 'Another reason.' })).status).toBe(409);
    const res = await asked;
    expect(res.isError).toBe(true);
    expect(errorOf(res)).toMatchObject({ code: 'user_declined', reason: 'Out of scope.' });
  });

  it("outlasts the client's request timeout: with progress it keeps waiting, without it a re-issued call attaches", async () => {
    const { runId, root } = await startRun();
    // Progress resets the client's 6 s timeout for as long as the question waits (a progress notification a second; a
    // loaded machine can space two of them by more than 2 s, which a 2 s timeout did not survive).
    let progressed = 0;
    const patient = ask(root, { questions: [choose] }, { timeout: 6000, onprogress: () => progressed++ });
    const [q] = await waitForQuestion(runId);
    await waitUntil(() => progressed >= 3);

    // A client that sends no progress token times out, and asks again with the very same words.
    const impatient = ask(root, { questions: [why] }, { timeout: 6000 });
    await expect(impatient).rejects.toMatchObject({ code: ErrorCode.RequestTimeout } satisfies Partial<McpError>);
    const again = ask(root, { questions: [why] });
    const both = await waitForQuestion(runId, 2);
    const second = both.find((x: any) => x.qid !== q.qid);

    for (const [question, answer] of [
      [q.qid, { selected_labels: ['SQLite'], text: null }],
      [second.qid, { selected_labels: [], text: 'Because.' }],
    ] as const) {
      expect((await operator.request('POST', `/runs/${runId}/questions/${question}/answer`, { answers: [answer] })).status).toBe(200);
    }
    expect((await patient).structuredContent.answer_text).toBe('Database: SQLite');
    expect((await again).structuredContent.answer_text).toBe('Because.');
    // One question for the two calls; and asked once more just after, the same answer at once.
    expect((await ask(root, { questions: [why] })).structuredContent.answer_text).toBe('Because.');
    expect(await eventsOf(runId, 'question_asked', 2)).toHaveLength(2);
  });
});

describe('limits', () => {
  it("holds a run's open questions to its limit; a re-issued call still attaches to its own", async () => {
    const { runId, root } = await startRun({ max_open_questions: 2 });
    const first = ask(root, { questions: [why] });
    const second = ask(root, { questions: [choose] });
    const [q1, q2] = await waitForQuestion(runId, 2);
    const third = await root.fail('ask_user', { questions: [features] });
    expect(third).toMatchObject({ code: 'quota_exceeded', quota: 'open_questions', limit: 2 });
    // The same words again: the same question, whatever the count.
    const again = ask(root, { questions: [why] });
    const byText = [q1, q2].find((q) => q.questions[0].question === 'Why?')!;
    const other = [q1, q2].find((q) => q !== byText)!;
    await operator.request('POST', `/runs/${runId}/questions/${byText.qid}/answer`, { answers: [{ selected_labels: [], text: 'Because.' }] });
    await operator.request('POST', `/runs/${runId}/questions/${other.qid}/answer`, { answers: [{ selected_labels: ['SQLite'], text: null }] });
    expect((await first).structuredContent.answer_text).toBe('Because.');
    expect((await again).structuredContent.answer_text).toBe('Because.');
    expect((await second).structuredContent.answer_text).toBe('Database: SQLite');
  });

  it("holds the limit against calls side by side: of 16 asked at once with room for 4, exactly 12 are refused", async () => {
    const { runId, root } = await startRun({ max_open_questions: 4 });
    const refused: unknown[] = [];
    // Each asked again while Dipper says a repeat is safe (sixteen calls at once can outlast a lookup's deadline on a
    // loaded machine); the refusals that remain are the limit's.
    const askSurely = async (i: number) => {
      for (;;) {
        const res = await ask(root, { questions: [{ ...why, question: `Why ${i}?` }] });
        if (!res.isError || !errorOf(res).retryable) return res;
        await new Promise((r) => setTimeout(r, errorOf(res).retry_after_ms ?? 500));
      }
    };
    const calls = Array.from({ length: 16 }, (_, i) =>
      askSurely(i).then((res) => {
        if (res.isError) refused.push(errorOf(res));
        return res;
      }),
    );
    await waitUntil(() => refused.length >= 12, 60_000);
    expect(refused).toEqual(Array(12).fill(expect.objectContaining({ code: 'quota_exceeded', quota: 'open_questions', limit: 4 })));
    const open = await waitForQuestion(runId, 4);
    expect(open).toHaveLength(4);
    for (const q of open) await operator.request('POST', `/runs/${runId}/questions/${q.qid}/answer`, { answers: [{ selected_labels: [], text: 'Because.' }] });
    const answered = (await Promise.all(calls)).filter((res) => !res.isError);
    expect(answered.map((res) => res.structuredContent.answer_text)).toEqual(Array(4).fill('Because.'));
  });

  it("reaches a holder's inbox whole when long, kept out of the holder's workflow state", async () => {
    const { runId, rootId, root } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const a = await spawn(root, runId, 'a');
    const context = 'Background. '.repeat(2000);
    const asked = ask(a.client, { questions: [why], context });
    const held = await waitForInbox(root, (m) => m.content.startsWith('[INBOX QUESTION]'));
    expect(held.content).toContain(context.trim());
    const qid = qidIn(held)!;
    // In the root's own state the question is a reference into the content store.
    const temporal = await connectTemporal();
    try {
      const view = await temporal.client.workflow.getHandle(agentWorkflowId(runId, rootId)).query(inboxQuery, {});
      const item = view.items.find((i) => i.message_id === held.message_id);
      expect(item?.content).toMatchObject({ content_ref: expect.any(String) });
    } finally {
      await temporal.close();
    }
    await root.ok('answer_question', { qid, answers: [{ selected_labels: [], text: 'Yes.' }], reason: 'I know.' });
    expect((await asked).structuredContent.answer_text).toBe('Yes.');
  });
});

async function waitForQuestion(runId: string, n = 1): Promise<any[]> {
  let got: any[] = [];
  await waitUntil(async () => {
    got = (await operator.request('GET', `/questions?run=${runId}`)).json.questions;
    return got.length >= n;
  });
  return got;
}

async function waitUntil(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error('not within time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
