import { defaultPayloadConverter } from '@temporalio/common';
import { createHash } from 'node:crypto';
import type { temporal } from '@temporalio/proto';
import { z } from 'zod';
import type { TeamClient } from './teamClient';
import { agentWorkflow, isphereApprovalWorkflow, questionWorkflow, runWorkflow } from '../../workflows';
import { typeIs } from '../temporal';
import { HttpError, parseBody } from './http';

/**
 * `GET /api/runs`: every run, newest first, from Temporal's visibility
 * store (no workflow is woken to list them). The one run list the console
 * and the CLI read.
 */
export const runListQuery = z.strictObject({
  status: z.enum(['active', 'ended', 'completed', 'cancelled']).optional(),
  page_size: z.coerce.number().int().min(1).max(200).default(50),
  page_token: z.string().max(4096).optional(),
});

export interface RunRow {
  run_id: string;
  status: 'active' | 'completed' | 'cancelled' | 'terminated' | 'failed';
  task: string | null;
  root_agent_id: string | null;
  started_at: string;
  ended_at: string | null;
  age_seconds: number;
  agent_count: number;
  /**
   * The worst that holds for an active run: `needs_attention` (an agent stopped or stalled), `needs_you` (a question,
   * a root report or an iSphere send waits for a person), else `working`; an ended run's is its status.
   */
  health: 'needs_attention' | 'needs_you' | 'working' | RunRow['status'];
  /** For an active run: agents stopped or stalled, and what waits for a person. */
  attention?: { agents: number; needs_you: number };
}

/** What waits for a person across every run, counted in visibility (no workflow is asked): the console's counters. */
export async function waitingCounts(team: TeamClient): Promise<{ questions: number; approvals: number; agents_needing_attention: number }> {
  const count = (what: string, query: string) => team.bounded(what, () => team.temporal.count(query));
  const [questions, approvals, agents] = await Promise.all([
    count('count questions for people', `${typeIs(questionWorkflow)} AND ExecutionStatus = 'Running' AND DipperStatus = 'awaiting_user'`),
    count('count approvals', `${typeIs(isphereApprovalWorkflow)} AND ExecutionStatus = 'Running' AND DipperStatus = 'pending'`),
    count('count stopped agents', `${typeIs(agentWorkflow)} AND ExecutionStatus = 'Running' AND DipperAttention IN ('stopped', 'stalled')`),
  ]);
  return { questions, approvals, agents_needing_attention: agents };
}

/** What an active run's row adds: counts from visibility, one each, side by side. */
async function attentionOf(team: TeamClient, runId: string): Promise<{ agents: number; needs_you: number }> {
  const running = `DipperRunId = '${runId}' AND ExecutionStatus = 'Running'`;
  const count = (what: string, query: string) => team.bounded(what, () => team.temporal.count(query));
  const [agents, questions, approvals] = await Promise.all([
    count('count stopped agents', `${typeIs(agentWorkflow)} AND ${running} AND DipperAttention IN ('stopped', 'stalled')`),
    count('count questions for people', `${typeIs(questionWorkflow)} AND ${running} AND DipperStatus = 'awaiting_user'`),
    count('count approvals', `${typeIs(isphereApprovalWorkflow)} AND ${running} AND DipperStatus = 'pending'`),
  ]);
  return { agents, needs_you: questions + approvals };
}

const Status = {
  RUNNING: 1,
  COMPLETED: 2,
  FAILED: 3,
  CANCELED: 4,
  TERMINATED: 5,
  CONTINUED_AS_NEW: 6,
  TIMED_OUT: 7,
} as const;

/** Each run's latest execution only: a run that continued as new lists once. */
function visibilityQuery(status: z.infer<typeof runListQuery>['status']): string {
  const runs = `${typeIs(runWorkflow)} AND ExecutionStatus != 'ContinuedAsNew'`;
  switch (status) {
    case 'active':
      return `${runs} AND ExecutionStatus = 'Running'`;
    case 'ended':
      return `${runs} AND ExecutionStatus != 'Running'`;
    case 'completed':
      return `${runs} AND ExecutionStatus != 'Running' AND DipperStatus != 'cancelled'`;
    case 'cancelled':
      return `${runs} AND DipperStatus = 'cancelled'`;
    default:
      return runs;
  }
}

const RUN_ID = /^run_[a-f0-9]{12}$/;

const decode = (p: temporal.api.common.v1.IPayload | null | undefined): unknown => (p ? defaultPayloadConverter.fromPayload(p) : undefined);
const time = (t: temporal.api.common.v1.IPayload | { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  t && 'seconds' in t ? Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;

function statusOf(execution: number, attribute: unknown): RunRow['status'] {
  if (execution === Status.RUNNING) return 'active';
  if (execution === Status.COMPLETED) return attribute === 'cancelled' ? 'cancelled' : 'completed';
  if (execution === Status.TERMINATED || execution === Status.CANCELED) return 'terminated';
  return 'failed';
}

/**
 * A page token this API gave out: Temporal's own, after a check of 8 bytes
 * over it and the filter it pages. Anything else is refused here, at once:
 * Temporal's visibility store, handed a token it cannot read, retried for
 * seconds before failing (the issue saw a 503 after 14 s).
 */
const checkOf = (status: string | undefined, token: Uint8Array) => createHash('sha256').update(`runs:${status ?? ''}:`).update(token).digest().subarray(0, 8);
const pageTokenOut = (status: string | undefined, token: Uint8Array) => Buffer.concat([checkOf(status, token), token]).toString('base64url');

function pageTokenIn(status: string | undefined, text: string): Buffer {
  const bytes = Buffer.from(text, 'base64url');
  const token = bytes.subarray(8);
  if (bytes.length <= 8 || !checkOf(status, token).equals(bytes.subarray(0, 8))) {
    throw new HttpError(400, 'invalid_input', 'page_token is not one this API gave out for this status.', { field: 'page_token' });
  }
  return token;
}

export async function listRuns(team: TeamClient, raw: unknown): Promise<{ runs: RunRow[]; next_page_token: string | null }> {
  const q = parseBody(runListQuery, raw);
  const pageToken = q.page_token === undefined ? undefined : pageTokenIn(q.status, q.page_token);
  const page = await team
    .bounded('list runs', () =>
      team.temporal.listPage({ query: visibilityQuery(q.status), pageSize: q.page_size, nextPageToken: pageToken }),
    )
    .catch((err: unknown) => {
      // A token of ours the store no longer takes (a visibility store replaced under it) is still not an outage.
      if (pageToken && (err as { code?: number }).code === 3) throw new HttpError(400, 'invalid_input', 'page_token is not one this API gave out for this status.', { field: 'page_token' });
      throw err;
    });
  const now = Date.now();
  const rows = await Promise.all(
    (page.executions ?? []).map(async (e): Promise<RunRow> => {
      const fields = e.searchAttributes?.indexedFields ?? {};
      const runId = String(decode(fields.DipperRunId) ?? e.execution?.workflowId?.replace(/^run\//, '') ?? '');
      const started = time(e.startTime);
      const closed = e.closeTime ? time(e.closeTime) : 0;
      // Dipper's own run id shape only ever reaches the query text.
      const status = statusOf(Number(e.status), decode(fields.DipperStatus));
      const [agents, attention] = RUN_ID.test(runId)
        ? await Promise.all([
            team.bounded('count agents', () => team.temporal.count(`${typeIs(agentWorkflow)} AND DipperRunId = '${runId}' AND ExecutionStatus != 'ContinuedAsNew'`)),
            status === 'active' ? attentionOf(team, runId) : undefined,
          ])
        : [0, undefined];
      const health: RunRow['health'] = !attention ? status : attention.agents > 0 ? 'needs_attention' : attention.needs_you > 0 ? 'needs_you' : 'working';
      return {
        run_id: runId,
        status,
        health,
        ...(attention ? { attention } : {}),
        task: (decode(e.memo?.fields?.task) as string | undefined) ?? null,
        root_agent_id: (decode(fields.DipperAgentId) as string | undefined) ?? null,
        started_at: new Date(started).toISOString(),
        ended_at: closed ? new Date(closed).toISOString() : null,
        age_seconds: Math.max(0, Math.round((now - started) / 1000)),
        agent_count: agents,
      };
    }),
  );
  const next = page.nextPageToken && page.nextPageToken.length > 0 ? pageTokenOut(q.status, page.nextPageToken) : null;
  return { runs: rows, next_page_token: next };
}
