import type { AgentState } from './state';

/**
 * What an agent is doing or waiting on, and since when, derived from its
 * own state alone: one function, read by the agents API, the console and
 * the Temporal UI's details line, so they cannot disagree.
 *
 * - working: none of the below; `since` is its last sign of life.
 * - waiting: on its leader's review or answer (the person's, for the root),
 *   its own question, its runtime (not started yet, or reading its
 *   terminate item), or the team it leads (children at work).
 * - owes: children wait for its review.
 * - stalled: the watchdog's ladder ran out (its reminders went unheeded and
 *   a person was asked).
 * - stopped: Dipper left it down (three crashes, or a spent budget) until
 *   its leader, or for the root a person, decides.
 * - ended: terminated, or its run ended.
 */
export type HealthState = 'working' | 'waiting' | 'owes' | 'stalled' | 'stopped' | 'ended';

export type WaitingOn =
  | { kind: 'leader'; for: 'review' | 'termination'; id: string | null }
  | { kind: 'question'; ids: string[] }
  | { kind: 'runtime'; for: 'start' | 'terminate' }
  | { kind: 'children'; ids: string[] }
  | { kind: 'review_of'; ids: string[] }
  | { kind: 'decision'; why: 'crashed' | 'budget' };

export interface AgentHealth {
  state: HealthState;
  waiting_on: WaitingOn | null;
  /** Workflow time (ms) since which it has been so, where the agent's state records it. */
  since: number | null;
  /** One line for a person (the Temporal UI's current details). */
  line: string;
}

/** Children waiting for this agent's review, oldest first. */
function owed(s: Pick<AgentState, 'data'>): { id: string; ts: number }[] {
  return Object.values(s.data.children)
    .filter((c) => c.review_pending && c.review_pending_ts !== null && c.status !== 'terminated' && !c.terminate_posted)
    .map((c) => ({ id: c.agent_id, ts: c.review_pending_ts! }))
    .sort((a, b) => a.ts - b.ts);
}

export function healthOf(s: Pick<AgentState, 'id' | 'status' | 'data'>): AgentHealth {
  const d = s.data;
  const leader = s.id.leaderId;
  const leaderName = leader ? `its leader ${leader}` : 'the person';
  const status = s.status;
  const lastSign = d.watch?.last_activity ?? d.launched_at ?? null;
  if (status === 'terminated') return { state: 'ended', waiting_on: null, since: null, line: 'Ended.' };
  if (d.crashed_out || d.halted) {
    const why = d.crashed_out ? 'crashed' : 'budget';
    const what = d.crashed_out ? `Crashed ${d.crashes} times; not restarted.` : 'Stopped: its model budget is spent.';
    return { state: 'stopped', waiting_on: { kind: 'decision', why }, since: d.stopped_at ?? null, line: `${what} Waiting for ${leaderName} to decide.` };
  }
  if (status === 'terminating') return { state: 'waiting', waiting_on: { kind: 'runtime', for: 'terminate' }, since: d.terminate.posted_at, line: 'Told to stop; waiting for its runtime to read the terminate item.' };
  if (d.driven === false) return { state: 'waiting', waiting_on: { kind: 'runtime', for: 'start' }, since: d.launched_at ?? null, line: 'Nobody acts as it yet: waiting for a client to connect with its token.' };
  if ((d.launch_gen ?? 0) === 0) return { state: 'waiting', waiting_on: { kind: 'runtime', for: 'start' }, since: null, line: 'Not started yet: waiting for its runtime.' };
  const w = d.watch;
  if (w && (w.idle_strikes >= 3 || Object.values(w.reviews).some((r) => r.strikes >= 3))) {
    const idle = w.idle_strikes >= 3;
    return {
      state: 'stalled',
      waiting_on: idle ? null : { kind: 'review_of', ids: owed(s).map((c) => c.id) },
      since: idle ? w.last_activity : (owed(s)[0]?.ts ?? null),
      line: idle ? 'Stalled: no tool call through three reminders; a person was asked.' : 'Stalled: a review it owes went unanswered through three reminders; a person was asked.',
    };
  }
  const reviews = owed(s);
  if (reviews.length > 0) return { state: 'owes', waiting_on: { kind: 'review_of', ids: reviews.map((c) => c.id) }, since: reviews[0].ts, line: `${reviews.length} of its children wait for its review.` };
  if (status === 'review_pending') return { state: 'waiting', waiting_on: { kind: 'leader', for: 'review', id: leader }, since: d.review.ts, line: `Waiting for ${leaderName} to review its work.` };
  if (status === 'termination_requested') return { state: 'waiting', waiting_on: { kind: 'leader', for: 'termination', id: leader }, since: null, line: `Asked ${leaderName} to end it; waiting for the answer.` };
  if (w && w.asking.length > 0) return { state: 'waiting', waiting_on: { kind: 'question', ids: [...w.asking] }, since: null, line: `Waiting for the answer to its question ${w.asking[0]}.` };
  const live = Object.values(d.children).filter((c) => c.status !== 'terminated');
  if (live.length > 0) return { state: 'waiting', waiting_on: { kind: 'children', ids: live.map((c) => c.agent_id) }, since: null, line: `Leads ${live.length} agent(s) at work.` };
  return { state: 'working', waiting_on: null, since: lastSign, line: 'Working.' };
}

/** The part of its health that the Temporal UI and the runs list filter on: does it need someone to act? */
export type Attention = 'stopped' | 'stalled' | 'none';

export function attentionOf(s: Pick<AgentState, 'id' | 'status' | 'data'>): Attention {
  const state = healthOf(s).state;
  return state === 'stopped' || state === 'stalled' ? state : 'none';
}
