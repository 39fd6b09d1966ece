import { inboxQuery } from '../../workflows/agent/messages';
import { agentsQuery } from '../../workflows/run/messages';
import type { PeerEntry } from '../../workflows/types';
import type { TeamClient } from './teamClient';

/** Agents whose inbox depth is read (a Query each); past it a run's rows carry none. */
const DEPTH_READ_FOR = 200;
/** Pending items counted per inbox; a deeper one reads as this many ("100+"). */
const DEPTH_COUNTED = 100;

export type AgentRow = PeerEntry & { inbox_depth: number | null };

/**
 * A run's agents for a person: the directory's entries (leader, depth,
 * status) with each live agent's pending inbox items. A Query per agent,
 * concurrently, for the first agents of a run only: this is a page a
 * person opens, not a poll loop.
 */
export async function agentRows(team: TeamClient, runId: string): Promise<AgentRow[]> {
  const entries = await team.query(team.run(runId), agentsQuery);
  const sorted = [...entries].sort((a, b) => a.depth - b.depth);
  return Promise.all(
    sorted.map(async (e, i) => {
      if (i >= DEPTH_READ_FOR || e.status === 'terminated') return { ...e, inbox_depth: e.status === 'terminated' ? 0 : null };
      const inbox = await team.query(team.agent(runId, e.agent_id), inboxQuery, { limit: DEPTH_COUNTED }).catch(() => null);
      return { ...e, inbox_depth: inbox ? inbox.items.filter((item) => item.seq > inbox.acked_through).length : null };
    }),
  );
}
