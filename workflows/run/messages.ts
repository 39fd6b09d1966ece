import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PeerEntry } from '../types';

/** An agent registers (entry) or reports a change (patch) to the run's directory. */
export interface PeerChange {
  agent_id: string;
  entry?: PeerEntry;
  patch?: Partial<Omit<PeerEntry, 'agent_id'>>;
}
export const peerChangedSignal = defineSignal<[PeerChange]>('peerChanged');

/** The root has no leader: its review or termination request waits here for a human. */
export interface RootReport {
  kind: 'review' | 'termination';
  detail: string;
  ts: number;
}
export const rootReportSignal = defineSignal<[RootReport]>('rootReport');

export interface RootDecision {
  kind: 'review' | 'termination';
  verdict: 'approve' | 'rework';
  text?: string;
}
export const rootDecisionUpdate = defineUpdate<{ ok: true; run_status: string }, [RootDecision]>('rootDecision');

export type PeerScope = 'team' | 'children' | 'all';
export interface PeerRow {
  agent_id: string;
  role: string;
  team_id: string | null;
  status: string;
  is_leader_of: string[];
  name: string | null;
}
export const peersQuery = defineQuery<PeerRow[], [{ caller_id: string; scope: PeerScope }]>('peers');
export const peerQuery = defineQuery<PeerEntry | null, [{ agent_id: string }]>('peer');

export interface RunView {
  run_id: string;
  status: 'active' | 'completed';
  root_ready: boolean;
  task: string;
  root_agent_id: string;
  agent_count: number;
  created_at: number;
  pending_root: RootReport[];
}
export const runQuery = defineQuery<RunView, []>('run');
