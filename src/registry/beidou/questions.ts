import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isQid, questionWorkflowId } from '../../../workflows/ids';
import { questionWorkflow } from '../../../workflows/question/workflow';
import { answerQuestionUpdate, escalateQuestionUpdate, questionQuery, type QuestionInput, type QuestionOver, type QuestionView } from '../../../workflows/question/messages';
import { openQuestionUpdate } from '../../../workflows/run/messages';
import { systemMessageUpdate } from '../../../workflows/agent/messages';
import { inboxQuestion } from '../../../workflows/question/answers';
import { questionItemId } from '../../../workflows/question/items';
import { INLINE_TEXT_BYTES, textBytes } from '../../common/pure/content';
import { agentIdKey, runIdKey, statusKey } from '../../../workflows/searchAttributes';
import { NotFound, underDeadline, type WorkflowRef } from '../../temporal';
import { ToolError } from '../../common/toolErrors';
import type { ToolContext } from '../types';
import { beidouTool, checkBytes } from './common';

const option = z.strictObject({
  label: z.string().min(1).max(200).describe('What the person sees and picks.'),
  description: z.string().max(2000).describe('What choosing it means.'),
  value: z.string().min(1).max(200).optional().describe('Machine discriminator returned in selected_values (defaults to the label).'),
  requires_text: z.boolean().optional().describe('Choosing it asks for typed text as well (returned in text).'),
});

const subQuestion = z
  .strictObject({
    question: z.string().min(1).describe('The question text.'),
    header: z.string().max(12).describe('Chip label, at most 12 characters; may be empty.'),
    multiSelect: z.boolean().describe('false: pick one (radio); true: pick one or more (checkboxes).'),
    options: z
      .array(option)
      .refine((o) => o.length === 0 || (o.length >= 2 && o.length <= 4), 'options must be empty (free text) or hold 2 to 4 choices')
      .refine((o) => new Set(o.map((x) => x.label)).size === o.length, 'option labels must differ')
      .describe('Empty for a free-text question, or 2 to 4 choices.'),
  })
  .refine((q) => !q.multiSelect || q.options.length > 0, { message: 'a multi-select question needs options', path: ['options'] });

const given = z.strictObject({
  selected_labels: z.array(z.string()).max(4).describe('Labels of the chosen options; empty for a free-text or "Other" answer.'),
  text: z.string().max(64 * 1024).nullable().describe('Typed answer: free text, "Other", or the text an option asks for; else null.'),
});

const qid = z.string().min(1).max(100).describe('The question id from the [INBOX QUESTION] system message in your inbox.');

const answer = z.object({ selected_labels: z.array(z.string()), selected_values: z.array(z.string()), text: z.string().nullable() });

/** The question's workflow, or unknown_qid for anything that cannot be one of this run's questions. */
function questionHandle(ctx: ToolContext, id: string): WorkflowRef {
  if (!isQid(id)) throw new ToolError('unknown_qid', `No pending question ${id.slice(0, 100)}.`, { field: 'qid' });
  return ctx.team.handle(questionWorkflowId(ctx.caller.runId, id));
}

/**
 * A run holds at most its limits.maxOpenQuestions open questions. The run's
 * workflow counts this one as open before its workflow starts, so calls
 * side by side cannot all pass the limit (a re-issued call for one already
 * open attaches to it whatever the count), and answers the asker's role and
 * chain of leaders in the same round trip.
 */
function openQuestion(ctx: ToolContext, id: string): Promise<{ fresh?: boolean; role: string; ancestors: string[] }> {
  return ctx.team.update(ctx.team.run(ctx.caller.runId), openQuestionUpdate, [{ qid: id, agent_id: ctx.caller.agentId }]);
}

/**
 * A new question's first holder hears of it from here at once, as a message
 * sent to it would: the question's workflow tells it too, but only after
 * its first workflow task, and its long poll then after the wake row that
 * task's event write carries. Both name the item alike (its qid and the
 * question's run id, workflows/question/items.ts), so the holder's inbox
 * keeps one, and should this fail the workflow's own is the one that
 * arrives. An Update, not a signal: the holder's long poll, woken once it
 * returns, finds no workflow task of the holder's in flight to wait behind.
 */
async function tellFirstHolder(ctx: ToolContext, args: QuestionInput, questionRunId: string | undefined): Promise<void> {
  if (!questionRunId) return;
  const holder = args.ancestors[0];
  const words = inboxQuestion({ qid: args.qid, askerId: args.askerId, askerRole: args.askerRole, questions: args.questions, context: typeof args.context === 'string' ? args.context : null, via: [] });
  const content = textBytes(words) > INLINE_TEXT_BYTES ? await ctx.content.keep(args.runId, words) : words;
  const message_id = questionItemId(args.qid, questionRunId, 1);
  const news = await ctx.team.update(ctx.team.agent(args.runId, holder), systemMessageUpdate, [{ message_id, content }]);
  ctx.wakeups.delivered(args.runId, holder, news ? [{ item: { seq: news.seq, message_id, kind: 'system', from: null, content, ts: news.ts }, news }] : []);
}

/**
 * The same asker asking the same thing gets the same qid: a call re-issued
 * after the client gave up attaches to the question it already asked.
 */
function qidFor(ctx: ToolContext, input: unknown): string {
  const hash = createHash('sha256').update(`${ctx.caller.runId}\n${ctx.caller.agentId}\n${JSON.stringify(input)}`).digest('hex');
  return `q_${hash.slice(0, 16)}`;
}

export const askUser = beidouTool({
  name: 'ask_user',
  title: 'Ask a question up the chain',
  description:
    "Ask 1-4 questions. They go to your leader's inbox first ([INBOX QUESTION]); your leader answers or escalates them, and past the root they reach the human. Blocks until answered, with no timeout; send a progress token to get progress notifications while you wait. Calling again with exactly the same questions while they are pending (or just answered) waits for the same answer.",
  permission: 'agent_mutation',
  // The qid is a digest of the call: the same questions again attach to the same question and get its answer.
  idempotency: 'call_receipt',
  concurrency: 'none',
  waits: true,
  input: z.strictObject({
    questions: z.array(subQuestion).min(1).max(4).describe('1 to 4 sub-questions.'),
    context: z.string().optional().describe('Shared background, shown verbatim with the questions.'),
  }),
  output: z.object({ answers: z.array(answer), answer_text: z.string() }),
  async handler(input, ctx) {
    checkBytes('questions', JSON.stringify(input), ctx.limits.maxContentBytes);
    const id = qidFor(ctx, input);
    const handle = ctx.team.handle(questionWorkflowId(ctx.caller.runId, id));
    // Each step gets a call's deadline of its own; the wait between them has none (the spec: no timeout).
    const step = <T>(fn: () => Promise<T>) => underDeadline(Date.now() + ctx.team.callTimeoutMs, fn);
    const watch = ctx.wakeups.watch(ctx.caller.runId, id);
    try {
      const { fresh, role, ancestors } = await step(() => openQuestion(ctx, id));
      const args: QuestionInput = {
        runId: ctx.caller.runId,
        qid: id,
        askerId: ctx.caller.agentId,
        askerRole: role,
        ancestors,
        questions: input.questions,
        context: input.context ?? null,
        humanGateway: ctx.questions.humanGateway,
        reattachMs: ctx.questions.reattachMs,
        decisionKeys: ctx.questions.decisionKeys,
      };
      const started = await step(() =>
        ctx.team.bounded('ask_user', () =>
          ctx.team.start(questionWorkflow, {
            workflowId: handle.workflowId,
            taskQueue: ctx.questions.taskQueue,
            args: [args],
            // Pending, or answered moments ago: the same question. Closed: ask it anew.
            workflowIdConflictPolicy: 'USE_EXISTING',
            workflowIdReusePolicy: 'ALLOW_DUPLICATE',
            staticSummary: `Question from ${role}: ${input.questions[0].question.slice(0, 100)}`,
            staticDetails: input.questions.map((q, i) => `${i}. ${q.header ? `[${q.header}] ` : ''}${q.question}`).join('  \n'),
            typedSearchAttributes: [
              { key: runIdKey, value: ctx.caller.runId },
              { key: agentIdKey, value: ctx.caller.agentId },
              { key: statusKey, value: 'asked' },
            ],
          }),
        ),
      );
      if (fresh === true && ancestors.length > 0) await step(() => tellFirstHolder(ctx, args, started.firstRunId)).catch(() => undefined);
      // A question this call asked anew is pending: its first look waits for a wake (or progressMs), where a look
      // now would only queue behind the question's first workflow tasks.
      for (let waited = 0; ; waited++) {
        if (waited > 0 || fresh !== true) {
          // An answer this process took is handed over with its wake (this asking's, not an earlier one's of the same
          // words); otherwise a look. A look that fails for a while (a worker restarting) is only a look: the wait
          // goes on.
          // (The question's own wake can overtake the answer on its way back to the call that gave it here.)
          await ctx.wakeups.coming(ctx.caller.runId, id);
          const told = ctx.wakeups.handed(ctx.caller.runId, id) as QuestionOver | undefined;
          const handedOver = told && told.asking === started.firstRunId ? outcome(told) : undefined;
          if (handedOver) return handedOver;
          const view = await step(() => ctx.team.query(handle, questionQuery)).catch((err: unknown) => {
            if (err instanceof ToolError && err.retryable) return undefined;
            throw err;
          });
          const over = view && outcome(view);
          if (over) return over;
          if (waited > 0) await ctx.progress?.(`waiting for an answer to ${id}${view ? `, held by ${view.holder ?? 'nobody'}` : ''}`);
        }
        // Woken when the question is over; between wakes, a look and a progress notification every progressMs.
        await watch.next(ctx.questions.progressMs, ctx.signal);
        if (ctx.signal?.aborted) throw new ToolError('cancelled', 'The client stopped waiting; ask again to attach to the same question.');
      }
    } finally {
      watch.close();
    }
  },
});

/** What ask_user answers once its question is over; undefined while it is pending. */
function outcome(view: Pick<QuestionView, 'qid' | 'status' | 'answers' | 'answer_text' | 'declined'>): { answers: z.infer<typeof answer>[]; answer_text: string } | undefined {
  switch (view.status) {
    case 'pending':
      return undefined;
    case 'answered':
      return { answers: view.answers ?? [], answer_text: view.answer_text ?? '' };
    case 'declined':
      throw new ToolError('user_declined', `The user declined to answer: ${view.declined?.reason ?? ''}`.trim(), {
        qid: view.qid,
        reason: view.declined?.reason ?? null,
      });
    case 'unavailable':
      throw new ToolError('gateway_unavailable', 'The question reached the top of the chain and no human gateway takes questions here.', { qid: view.qid });
    case 'cancelled':
      throw new ToolError('run_ended', 'The run ended before the question was answered.', { qid: view.qid });
  }
}

export const answerQuestion = beidouTool({
  name: 'answer_question',
  title: 'Answer a question you hold',
  description:
    "Answer an [INBOX QUESTION] you hold, one answer per sub-question in order: {selected_labels, text}. For free text or \"Other\", leave selected_labels empty and put the answer in text. The asker's ask_user returns your answer; the human is not asked.",
  permission: 'agent_mutation',
  // The question's workflow takes one answer from its holder; a repeat is refused.
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({
    qid,
    answers: z.array(given).min(1).max(4).describe('One entry per sub-question, in order.'),
    reason: z.string().min(1).max(4000).describe('Why you can answer this yourself instead of escalating (audit trail).'),
  }),
  output: z.object({ ok: z.literal(true), qid: z.string() }),
  async handler(input, ctx) {
    try {
      // The asker's ask_user, when it waits on this process, is handed the answer; on another replica, it hears of it
      // from the question's wake and reads it.
      const { over: _over, ...answered } = await ctx.wakeups.bring(
        ctx.caller.runId,
        input.qid,
        () => ctx.team.update(questionHandle(ctx, input.qid), answerQuestionUpdate, [{ by: { agent_id: ctx.caller.agentId }, answers: input.answers, reason: input.reason }]),
        (done) => done.over,
      );
      return answered;
    } catch (err) {
      if (err instanceof NotFound) throw new ToolError('unknown_qid', `No pending question ${input.qid}.`, { field: 'qid' });
      throw err;
    }
  },
});

export const escalateQuestion = beidouTool({
  name: 'escalate_question',
  title: 'Pass a question up one hop',
  description:
    "Pass an [INBOX QUESTION] you hold to your own leader (past the root: the human). Returns at once; the answer goes to the original asker, not to you. new_holder is null when it reached the human.",
  permission: 'agent_mutation',
  // After one hop the caller no longer holds the question: a repeat is refused (not_holder).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({
    qid,
    reason: z.string().min(1).max(4000).describe("Why you can't answer it yourself (audit trail)."),
  }),
  output: z.object({ ok: z.literal(true), qid: z.string(), new_holder: z.string().nullable() }),
  async handler(input, ctx) {
    try {
      const passed = await ctx.team.update(questionHandle(ctx, input.qid), escalateQuestionUpdate, [{ by: { agent_id: ctx.caller.agentId }, reason: input.reason }]);
      // The question's Update ends once its signal reached the new holder's inbox: that holder's long polls on this
      // process look now, not after the question's event write carries the wake.
      if (passed.new_holder !== null) ctx.wakeups.wake(ctx.caller.runId, passed.new_holder);
      return passed;
    } catch (err) {
      if (err instanceof NotFound) throw new ToolError('unknown_qid', `No pending question ${input.qid}.`, { field: 'qid' });
      throw err;
    }
  },
});
