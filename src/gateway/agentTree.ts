import { inboxQuery, type InboxView } from '../../workflows/agent/messages';
import type { AgentHealth } from '../../workflows/agent/health';
import { agentsQuery } from '../../workflows/run/messages';
import type { PeerEntry } from '../../workflows/types';
import { endedAgents } from '../ops/endedAgents';
import type { TeamClient } from './teamClient';

/** Agents whose inbox depth is read (a Query each); past it a run's rows carry none. */
const DEPTH_READ_FOR = 200;
/** Pending items counted per inbox; a deeper one reads as this many ("100+"). */
const DEPTH_COUNTED = 100;

/** `ended_by_server`: the server closed the agent's workflow (terminated it, say for a task over its size limits, or it timed out) and its directory entry could not say so; why. */
/** `health`: what it does or waits on, and since when (workflows/agent/health.ts), for the agents whose inbox is read. */
/** `plan`: the plan it leads, each task's state and agent, so a person sees the tasks nobody has started. */
export type AgentRow = PeerEntry & { inbox_depth: number | null; ended_by_server?: string; health?: AgentHealth; plan?: InboxView['plan'] };

/**
 * A run's agents for a person: the directory's entries (leader, depth,
 * status) with each live agent's pending inbox items. A Query per agent,
 * concurrently, for the first agents of a run only: this is a page a
 * person opens, not a poll loop.
 */
export async function agentRows(team: TeamClient, runId: string): Promise<AgentRow[]> {
  const [entries, ended] = await Promise.all([
    team.query(team.run(runId), agentsQuery),
    team.bounded('ended agents', () => endedAgents(team.temporal, ` AND DipperRunId = "${runId}"`)),
  ]);
  const endedBy = new Map(ended.map((a) => [a.agentId, a.message]));
  const sorted = [...entries].sort((a, b) => a.depth - b.depth);
  return Promise.all(
    sorted.map(async (e, i) => {
      const lost = e.status !== 'terminated' ? endedBy.get(e.agent_id) : undefined;
      if (lost !== undefined) return { ...e, status: 'terminated', inbox_depth: null, ended_by_server: lost };
      if (i >= DEPTH_READ_FOR || e.status === 'terminated') return { ...e, inbox_depth: e.status === 'terminated' ? 0 : null };
      const inbox = await team.query(team.agent(runId, e.agent_id), inboxQuery, { limit: DEPTH_COUNTED }).catch(() => null);
      const depth = inbox ? inbox.items.filter((item) => item.seq > inbox.acked_through).length : null;
      return { ...e, inbox_depth: depth, ...(inbox?.health ? { health: inbox.health } : {}), ...(inbox?.plan ? { plan: inbox.plan } : {}) };
    }),
  );
}
