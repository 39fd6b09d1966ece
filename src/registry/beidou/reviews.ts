import { z } from 'zod';
import { pendingReviewsQuery, requestTerminationUpdate, signalReviewUpdate } from '../../../workflows/agent/messages';
import { reviewDetailProblem } from '../../../workflows/agent/reviewDetail';
import { ToolError } from '../../common/toolErrors';
import { beidouTool, callerHandle, checkBytes } from './common';

export const signalReview = beidouTool({
  name: 'signal_review',
  title: 'Signal work ready for review',
  description:
    "Tell your leader your deliverables are ready for review: the detail goes to the leader's inbox (the root's goes to the human). detail must contain [REVIEW REQUIRED] or [ITERATION READY]. You stay alive; call again to supersede.",
  permission: 'agent_mutation',
  // A repeat supersedes the pending report with a new one (the spec: call again to supersede).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({
    detail: z
      .string()
      .nullable()
      .describe('Summary with a [REVIEW REQUIRED] or [ITERATION READY] marker: deliverables, open questions, options for the leader.'),
  }),
  output: z.object({ recorded: z.literal(true), review_pending: z.literal(true) }),
  async handler({ detail }, ctx) {
    checkBytes('detail', detail ?? '', ctx.limits.maxContentBytes);
    // Checked before a long detail is stored, so a refused call keeps nothing; the workflow checks short ones again.
    const problem = reviewDetailProblem(detail ?? '');
    if (problem) throw new ToolError('envelope_missing', problem.message, { field: 'detail', reason: problem.reason });
    const kept = await ctx.content.keep(ctx.caller.runId, detail ?? '');
    const { leader_id } = await ctx.content.around([kept], () => ctx.team.update(callerHandle(ctx), signalReviewUpdate, [{ detail: kept }]));
    // The report is in the leader's inbox now: its runtime's long poll on this gateway can look at once.
    if (leader_id) ctx.wakeups.wake(ctx.caller.runId, leader_id);
    return { recorded: true as const, review_pending: true as const };
  },
});

export const requestTermination = beidouTool({
  name: 'request_termination',
  title: 'Request termination',
  description:
    'Declare all your work complete and ask your leader to terminate you; then end your turn and wait. Refused with plan_incomplete while your plan has unfinished tasks. The leader answers with terminate_child or a rework message.',
  permission: 'agent_mutation',
  // A repeat asks again; the leader's inbox keeps only the newest unread request.
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({ detail: z.string().optional().describe('Summary of the completed work.') }),
  output: z.object({ recorded: z.literal(true), termination_requested: z.literal(true) }),
  async handler({ detail }, ctx) {
    if (detail !== undefined) checkBytes('detail', detail, ctx.limits.maxContentBytes);
    const kept = detail === undefined ? undefined : await ctx.content.keep(ctx.caller.runId, detail);
    const { leader_id } = await ctx.content.around([kept], () =>
      ctx.team.update(callerHandle(ctx), requestTerminationUpdate, [kept === undefined ? {} : { detail: kept }]),
    );
    if (leader_id) ctx.wakeups.wake(ctx.caller.runId, leader_id);
    return { recorded: true as const, termination_requested: true as const };
  },
});

const pendingReview = z.object({
  agent_id: z.string(),
  role: z.string(),
  review_pending_ts: z.number().nullable(),
  age_s: z.number().nullable(),
  summary: z.string(),
  name: z.string().nullable(),
});

export const listPendingReviews = beidouTool({
  name: 'list_pending_reviews',
  title: 'List pending reviews',
  description:
    'List your direct children waiting for your review (signal_review not yet answered by terminate_child or a rework message), oldest first. Read-only.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  input: z.strictObject({}),
  output: z.array(pendingReview),
  async handler(_input, ctx) {
    return ctx.content.resolve(await ctx.team.query(callerHandle(ctx), pendingReviewsQuery, { now: Date.now() }));
  },
});
