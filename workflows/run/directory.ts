import type { PeerEntry } from '../types';
import type { PeerChange, PeerRow, PeerScope } from './messages';

/**
 * The run's directory of agents: one copy of the team graph, kept current by
 * signals from agent workflows, so list_peers over a thousand agents is one
 * Query and not a thousand.
 */
export class Directory {
  constructor(readonly entries: Record<string, PeerEntry>) {}

  get size(): number {
    return Object.keys(this.entries).length;
  }

  apply(change: PeerChange): void {
    const current = this.get(change.agent_id);
    if (change.remove) {
      if (current) delete this.entries[change.agent_id];
      return;
    }
    // Registration comes first (the leader registers a member before starting it); a repeat is ignored.
    if (change.entry && !current) this.entries[change.agent_id] = change.entry;
    else if (current && change.patch) {
      // Status is told from more than one place (the call, then the agent's own report, a leader for its child):
      // a late word never brings a terminated agent back.
      const { status, ...rest } = change.patch;
      Object.assign(current, current.status === 'terminated' || status === undefined ? rest : change.patch);
    }
  }

  /** Own properties only: "__proto__" or "constructor" is no agent. */
  get(agentId: string): PeerEntry | null {
    return Object.hasOwn(this.entries, agentId) ? this.entries[agentId] : null;
  }

  /**
   * team: the caller's teammates and their leader; a teamless agent (the
   * root) has no teammates, so it sees the members of the teams it leads.
   * children: members of the teams the caller leads. all: everyone.
   */
  peers(callerId: string, scope: PeerScope): PeerRow[] {
    const me = this.get(callerId);
    const all = Object.values(this.entries);
    let rows: PeerEntry[];
    if (scope === 'all') rows = all;
    else if (scope === 'children' || !me?.team_id) rows = all.filter((e) => e.leader_id === callerId);
    else rows = all.filter((e) => e.agent_id !== callerId && (e.team_id === me.team_id || e.agent_id === me.leader_id));
    return rows.map(toRow);
  }
}

function toRow(e: PeerEntry): PeerRow {
  return {
    agent_id: e.agent_id,
    role: e.role,
    team_id: e.team_id,
    status: e.status,
    is_leader_of: e.is_leader_of,
    name: e.name,
  };
}
