import { defaultLimits } from '../../src/common/pure/limits';
import { overdueReviewAsk, idleAgentAsk } from '../question/system';
import { systemQuestionSignal } from '../run/messages';
import { runWorkflowId } from '../ids';
import { tell } from '../signals';
import { failureText } from '../errors';
import { newId, type AgentState } from './state';

/**
 * Watchdog passes A and B (the notes), run by the agent's own loop on a
 * durable timer: whatever process dies, the timer fires in Temporal and the
 * next worker acts on it. Each pass has three strikes: two reminders in the
 * agent's inbox, then a question to the human, then silence.
 */

export interface WatchData {
  /** Workflow time of the agent's last sign of life: a tool call the gateway marked, or an inbox delivery (not its acknowledgement). */
  last_activity: number;
  /** Pass B: strikes since that sign of life, and when the last came. */
  idle_strikes: number;
  idle_struck_at: number | null;
  /** Pass B counts from when the agent last became idle-able (no live child, no review, no question of its own). */
  eligible_since: number | null;
  /** Pass A, per child with a review pending: which review (its time), strikes, and when the last came. */
  reviews: Record<string, { ts: number; strikes: number; struck_at: number }>;
  /** Its own ask_user questions still open: it waits on them, it is not idle. */
  asking: string[];
}

const STRIKES = 3;
/** "Due now, recompute": the loop wakes at once (an agent just became idle-able). */
export const DUE_NOW = -1;

function watchOf(s: AgentState): WatchData {
  return (s.data.watch ??= { last_activity: Date.now(), idle_strikes: 0, idle_struck_at: null, eligible_since: null, reviews: {}, asking: [] });
}

const reviewMs = (s: AgentState) => (s.limits.reviewWatchdogSeconds ?? defaultLimits.reviewWatchdogSeconds!) * 1000;
const idleMs = (s: AgentState) => (s.limits.idleWatchdogSeconds ?? defaultLimits.idleWatchdogSeconds!) * 1000;

/** A sign of life: pass B starts counting again. */
export function touch(s: AgentState): void {
  const w = watchOf(s);
  w.last_activity = Date.now();
  w.idle_strikes = 0;
  w.idle_struck_at = null;
}

export function setAsking(s: AgentState, qid: string, open: boolean): void {
  const w = watchOf(s);
  w.asking = w.asking.filter((q) => q !== qid);
  if (open) w.asking.push(qid);
  else touch(s);
}

/** Children waiting for this leader's review, with the review each waits on. */
function pendingReviews(s: AgentState): { id: string; name: string; ts: number }[] {
  return Object.values(s.data.children)
    .filter((c) => c.review_pending && c.review_pending_ts !== null && c.status !== 'terminated' && !c.terminate_posted)
    .map((c) => ({ id: c.agent_id, name: c.name, ts: c.review_pending_ts! }));
}

/** Reads only: the loop's wake condition calls it through nextDue. */
function idleAble(s: AgentState): boolean {
  return (
    s.status === 'active' &&
    !s.data.crashed_out &&
    !s.data.halted &&
    s.data.driven !== false &&
    (s.data.launch_gen ?? 0) > 0 &&
    (s.data.watch?.asking.length ?? 0) === 0 &&
    !Object.values(s.data.children).some((c) => c.status !== 'terminated')
  );
}

/**
 * When the next strike is due (workflow time), DUE_NOW when the loop must
 * look again at once, or null when nothing is watched. Changes nothing, so
 * the loop's wake condition may call it.
 */
export function nextDue(s: AgentState): number | null {
  if (s.status === 'terminated') return null;
  const w = s.data.watch;
  let due: number | null = null;
  const consider = (at: number) => (due = due === null ? at : Math.min(due, at));
  if (reviewMs(s) > 0) {
    for (const c of pendingReviews(s)) {
      const entry = w?.reviews[c.id];
      const current = entry && entry.ts === c.ts ? entry : { strikes: 0, struck_at: c.ts };
      if (current.strikes < STRIKES) consider(current.struck_at + reviewMs(s));
    }
  }
  if (idleMs(s) > 0 && idleAble(s)) {
    if (!w || w.eligible_since === null) return DUE_NOW;
    if (w.idle_strikes < STRIKES) consider(Math.max(w.last_activity, w.eligible_since, w.idle_struck_at ?? 0) + idleMs(s));
  }
  return due;
}

/** Acts on every strike that is due; a failure is recorded (watchdog.exception), never a crash. */
export async function runWatchdog(s: AgentState): Promise<void> {
  try {
    await passA(s);
    await passB(s);
  } catch (err) {
    s.events.emit('watchdog.exception', { message: failureText(err) });
  }
}

async function passA(s: AgentState): Promise<void> {
  const w = watchOf(s);
  const pending = pendingReviews(s);
  // Reviews answered since: forgotten.
  for (const id of Object.keys(w.reviews)) if (!pending.some((c) => c.id === id && c.ts === w.reviews[id].ts)) delete w.reviews[id];
  const interval = reviewMs(s);
  if (interval <= 0) return;
  const now = Date.now();
  for (const c of pending) {
    const entry = (w.reviews[c.id] ??= { ts: c.ts, strikes: 0, struck_at: c.ts });
    if (entry.strikes >= STRIKES || now < entry.struck_at + interval) continue;
    entry.strikes += 1;
    entry.struck_at = now;
    const waited = Math.round((now - c.ts) / 1000);
    if (entry.strikes < STRIKES) {
      s.events.emit('completion.reping', { child_id: c.id, strike: entry.strikes, waited_s: waited });
      const last = entry.strikes === STRIKES - 1 ? ` If it is still pending in ${Math.round(interval / 1000)} s, the user will be asked about it.` : '';
      remind(s, `[WATCHDOG] ${c.name} (${c.id}) has waited ${waited} s for your review. Call terminate_child to approve it, or send_message to send it back for rework, now.${last}`);
    } else {
      s.events.emit('review.escalated_to_user', { child_id: c.id, waited_s: waited });
      const ask = overdueReviewAsk({ id: s.id.agentId, name: s.id.name }, { id: c.id, name: c.name }, waited);
      await tell(runWorkflowId(s.id.runId), systemQuestionSignal, { ...ask, key: `review-${s.id.agentId}-${c.id}-${c.ts}` });
    }
  }
}

async function passB(s: AgentState): Promise<void> {
  const w = watchOf(s);
  if (!idleAble(s)) {
    w.eligible_since = null;
    return;
  }
  const now = Date.now();
  if (w.eligible_since === null) w.eligible_since = now;
  const interval = idleMs(s);
  if (interval <= 0 || w.idle_strikes >= STRIKES) return;
  const since = Math.max(w.last_activity, w.eligible_since);
  if (now < Math.max(since, w.idle_struck_at ?? 0) + interval) return;
  w.idle_strikes += 1;
  w.idle_struck_at = now;
  const idle = Math.round((now - since) / 1000);
  if (w.idle_strikes < STRIKES) {
    s.events.emit('liveness.nudge', { strike: w.idle_strikes, idle_s: idle });
    const last = w.idle_strikes === STRIKES - 1 ? ` If you stay silent for another ${Math.round(interval / 1000)} s, the user will be asked about you.` : '';
    remind(
      s,
      `[WATCHDOG] No tool call from you for ${idle} s. Your options: signal_review if your work is done; send_message to coordinate with your leader or team; ask_user if you are blocked on a decision; or keep working.${last}`,
    );
  } else {
    s.events.emit('liveness.escalated_to_user', { idle_s: idle });
    const ask = idleAgentAsk({ id: s.id.agentId, name: s.id.name }, idle);
    await tell(runWorkflowId(s.id.runId), systemQuestionSignal, { ...ask, key: `idle-${s.id.agentId}-${since}` });
  }
}

/** A watchdog line in the agent's own inbox; it is no sign of the agent's life. */
function remind(s: AgentState, content: string): void {
  s.quietPush = true;
  try {
    s.inbox.push('system', null, content, newId('msg'), Date.now());
  } finally {
    s.quietPush = false;
  }
}
