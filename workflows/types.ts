import type { Limits } from '../src/config';
import type { Rules, Text } from '../src/common/pure/content';

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
