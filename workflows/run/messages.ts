import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Text } from '../../src/common/pure/content';
import type { PeerEntry } from '../types';
import type { SystemAsk } from '../question/system';
import type { DecisionProof } from '../../src/common/pure/decisionProof';
import type { GivenAnswer } from '../question/answers';

/** An agent registers (entry) or reports a change (patch) to the run's directory. */
export interface PeerChange {
  agent_id: string;
  entry?: PeerEntry;
  patch?: Partial<Omit<PeerEntry, 'agent_id'>>;
  /** The agent never started, or its team was taken back: it leaves the directory. */
  remove?: true;
}
export const peerChangedSignal = defineSignal<[PeerChange]>('peerChanged');
/** Many changes in one signal, applied in order: a leader registers a whole group of members at once. */
export const peersChangedSignal = defineSignal<[{ changes: PeerChange[] }]>('peersChanged');

/** The root has no leader: its review or termination request waits here for a human. */
export interface RootReport {
  kind: 'review' | 'termination';
  detail: Text;
  ts: number;
  /** The question that asks the human for the verdict (absent for reports from before `root-questions`). */
  qid?: string;
}
/** A question of the run opened or closed (workflows/question): the run ends those still open when it ends. */
export const questionOpenedSignal = defineSignal<[{ qid: string }]>('questionOpened');
export const questionClosedSignal = defineSignal<[{ qid: string }]>('questionClosed');
export const rootReportSignal = defineSignal<[RootReport]>('rootReport');

export interface RootDecision {
  kind: 'review' | 'termination';
  verdict: 'approve' | 'rework';
  /** The human's words to the root; a long text is a reference into the content store. */
  text?: Text;
  /** The name of the operator who decided (absent in decisions made before operators had names). */
  operator?: string;
}
/** Through the operator API: the gateway's proof (rootDecisionClaim) goes with it, and the time of the report it decides. */
export const rootDecisionUpdate = defineUpdate<{ ok: true; run_status: string }, [RootDecision & { proof?: DecisionProof; report_ts?: number }]>('rootDecision');
/**
 * The human answered the root's review question (workflows/question/system.ts); ignored once decided another way.
 * It carries the person's answer as given and the gateway's proof of it, which the run checks again: a Signal has
 * no validator, and anyone who reaches Temporal can send one.
 */
export interface RootAnswered {
  qid: string;
  kind: RootDecision['kind'];
  operator: string;
  given: GivenAnswer[];
  asked_at: number;
  proof: DecisionProof;
}
export const rootAnsweredSignal = defineSignal<[RootAnswered]>('rootAnswered');
/** An agent's watchdog asks the human (workflows/agent/watchdog.ts); the run starts the question. */
export const systemQuestionSignal = defineSignal<[SystemAsk & { key: string }]>('systemQuestion');

/** `cancelled`: ended by an operator (or its deadline) before the root's termination was approved. */
export type RunStatus = 'active' | 'completed' | 'cancelled';

/** Ends a run now: every agent gets its terminate sentinel, runtimes stop, the run closes. */
export interface CancelRun {
  /** The operator who cancelled (or `deadline`). */
  by: string;
  reason: string;
}
export const cancelRunUpdate = defineUpdate<{ run_status: RunStatus }, [CancelRun]>('cancelRun');

export type PeerScope = 'team' | 'children' | 'all';
export interface PeerRow {
  agent_id: string;
  role: string;
  team_id: string | null;
  status: string;
  is_leader_of: string[];
  name: string | null;
}
/** Arguments are optional: a person pressing "Run Query" in the Temporal UI sends none. */
export const peersQuery = defineQuery<PeerRow[], [{ caller_id?: string; scope?: PeerScope }?]>('peers');
export const peerQuery = defineQuery<PeerEntry | null, [{ agent_id?: string }?]>('peer');
/** How many questions of the run are open, and whether `qid` is one of them (ask_user's cap; a re-issued call attaches past it). */
export const openQuestionsQuery = defineQuery<{ open: number; includes: boolean; limit: number | null }, [{ qid?: string }?]>('openQuestions');
/**
 * ask_user's room: counts `qid` as open before its question workflow starts, so calls side by side cannot all pass
 * the run's limit. Refused with `quota_exceeded` when the run is full (a qid already open is let through whatever the
 * count), `unknown_agent` when the asker is not in the directory. Answers the asker's role and its chain of leaders
 * up to the root, which the question climbs.
 */
export const openQuestionUpdate = defineUpdate<
  /** fresh: the run had no open question of this id, so this call asks it anew (absent from older workers: read as not fresh). */
  { open: number; fresh?: boolean; role: string; ancestors: string[] },
  [{ qid: string; agent_id: string }]
>('openQuestion');
/** Every agent's whole directory entry (leader, depth): the operator API's agent tree. */
export const agentsQuery = defineQuery<PeerEntry[], []>('agents');

export interface RunView {
  run_id: string;
  status: RunStatus;
  root_ready: boolean;
  /** Read back by the gateway when it is a reference. */
  task: Text;
  root_agent_id: string;
  agent_count: number;
  created_at: number;
  pending_root: RootReport[];
  /** When the run will be cancelled by its deadline (ISO 8601), or null. */
  deadline_at: string | null;
  /** The host whose workers hold the run's files and processes (DIPPER_HOST_ID), or null on one host. */
  host?: string | null;
}
export const runQuery = defineQuery<RunView, []>('run');

/**
 * A leader asks the run for room before it spawns: agents per run,
 * concurrent spawns and the spawn rate are the run's to count. Refused with
 * `quota_exceeded` (which quota, its limit, and when to retry if waiting helps).
 */
/** A reservation given back by the caller, whose release signal may not have arrived yet. */
export interface SpawnRelease {
  reservation_id: string;
  spawned: number;
}
/**
 * `releases` are applied first, so a leader's own finished spawn never counts against its next. `reservation_id` is
 * the caller's: the same request sent again (an activity retried after its first attempt's answer was lost with a
 * killed worker) finds its reservation and gets it back, instead of holding a second one for ever.
 */
export interface ReserveRequest {
  count: number;
  releases?: SpawnRelease[];
  reservation_id: string;
}
export const reserveSpawnsUpdate = defineUpdate<{ reservation_id: string }, [ReserveRequest]>('reserveSpawns');
/** The spawn finished (`spawned` of the reserved count started); its slots in flight are free again. */
export const releaseSpawnsSignal = defineSignal<[{ reservation_id: string; spawned: number }]>('releaseSpawns');

/** An iSphere approval of the run started (workflows/isphere): it ends with the run. */
export const approvalOpenedSignal = defineSignal<[{ approval_id: string }]>('approvalOpened');
export const approvalClosedSignal = defineSignal<[{ approval_id: string }]>('approvalClosed');
