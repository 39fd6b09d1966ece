import type { Limits } from '../src/config';
import type { Rules, Text } from '../src/common/pure/content';
import type { AgentIdentity } from '../src/common/launchPayload';

export type { Limits };

export type AgentStatus = 'active' | 'review_pending' | 'termination_requested' | 'terminating' | 'terminated';

/** What the run's directory knows about one agent (the list_peers row, plus routing facts). */
export interface PeerEntry {
  agent_id: string;
  name: string | null;
  role: string;
  team_id: string | null;
  leader_id: string | null;
  status: AgentStatus;
  is_leader_of: string[];
  depth: number;
}

export type InboxKind = 'message' | 'review_report' | 'termination_request' | 'terminate' | 'system';

export interface InboxItem {
  seq: number;
  message_id: string;
  kind: InboxKind;
  /** Sender agent id; null for system and human messages. */
  from: string | null;
  /** Large content is a reference into the content store; readers get the text. */
  content: Text;
  ts: number;
}

/**
 * An item a delivery just put into an inbox, as the delivering Update
 * answers it, so a long poll on the delivering gateway can hand it over
 * without asking the workflow again. `before` is the newest other item
 * still pending when it was put (0: none): a poll whose cursor is at or
 * past it knows this item is the next one it has not seen.
 */
export interface InboxNews {
  seq: number;
  ts: number;
  before: number;
  /** The agent's status once it was put (a poll's answer carries it). */
  status: AgentStatus;
}

export type PlanTaskStatus = 'ready' | 'blocked' | 'in_flight' | 'done' | 'failed';

export interface PlanTaskSpec {
  id: string;
  role: string;
  skill: string;
  /** Long task texts and descriptions are references into the content store. */
  task: Text;
  description?: Text;
  model?: string;
  depends_on?: string[];
}

export interface PlanTask extends Required<Omit<PlanTaskSpec, 'model'>> {
  model?: string;
  status: PlanTaskStatus;
  agent_id?: string;
}

export interface Plan {
  plan_id: string;
  plan_path: string;
  tasks: PlanTask[];
}

export interface ChildRecord {
  agent_id: string;
  name: string;
  role: string;
  skill: string;
  team_id: string;
  plan_task_id?: string;
  status: AgentStatus;
  review_pending: boolean;
  review_pending_ts: number | null;
  summary: Text;
  termination_requested: boolean;
  terminate_posted: boolean;
  /** The newest numbered change applied (see ChildChange.seq); absent for children that do not number them. */
  seq?: number;
}

export interface TeamRecord {
  team_id: string;
  name: string;
  task?: Text;
  rules: Rules;
  members: string[];
}

/** One member as its leader describes it; its folders are filled in here, once they are made. */
export interface MemberToStart {
  identity: Omit<AgentIdentity, 'workspacePath' | 'artifactsPath'>;
  entry: PeerEntry;
  /** The task it is given (absent: the run's own), its first message; after the [TASK ASSIGNMENT] block for a plan task. */
  task?: Text;
  roleDescription: Text;
  rules: Rules;
}

/** A spawn's members, started by prepareSpawn (activities/memberStarts.ts) once room is reserved and folders made. */
export interface MembersToStart {
  members: MemberToStart[];
  /** The leader's: members run on its task queue with its workflow task timeout, under its run's limits. */
  taskQueue: string;
  taskTimeoutMs: number;
  limits: Limits;
  runTask: Text;
  /** Changes the run's directory hears with the members' entries, first (a leader's new team). */
  before: Array<{ agent_id: string; patch: Partial<Omit<PeerEntry, 'agent_id'>> }>;
  /** Members the team had before these: the memberStart fault counts from there. */
  teamSizeBefore: number;
}

export interface MembersStarted {
  /** Members the server refused to start: they left the directory again. */
  refused: string[];
  /** False when the run had closed: the members that started are to be told it ended. */
  registered: boolean;
}

/** What a spawn's step made: its folders and what became of the members it started (activities/spawn.ts). */
export interface SpawnMade {
  workspacePath: string;
  artifactsPath?: string;
  started?: MembersStarted;
}

/**
 * A spawn_agent whose step tells its leader, then the caller's gateway, as
 * soon as its member runs (`spawned/<key>` on the wake feed; `spawn-failed/<key>`
 * when an attempt fails): the key is the spawn's Update id.
 */
export interface SpawnAnnounce {
  leaderId: string;
  key: string;
}
