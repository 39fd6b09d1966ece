import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Registered on the server from temporal-config/dev-server.json; a test keeps the two lists equal.
export const runIdKey = defineSearchAttributeKey('DipperRunId', SearchAttributeType.KEYWORD);
export const agentIdKey = defineSearchAttributeKey('DipperAgentId', SearchAttributeType.KEYWORD);
export const roleKey = defineSearchAttributeKey('DipperRole', SearchAttributeType.KEYWORD);
export const leaderIdKey = defineSearchAttributeKey('DipperLeaderId', SearchAttributeType.KEYWORD);
export const statusKey = defineSearchAttributeKey('DipperStatus', SearchAttributeType.KEYWORD);
/** On agents: `stopped` or `stalled` while one needs a person or its leader to act (workflows/agent/health.ts), else `none`. */
export const attentionKey = defineSearchAttributeKey('DipperAttention', SearchAttributeType.KEYWORD);

export const searchAttributeNames = [runIdKey, agentIdKey, roleKey, leaderIdKey, statusKey, attentionKey].map((k) => k.name);

/** What a new member's workflow starts with: its run, id, role and leader, and `active` (both spawn paths). */
export function memberAttributes(m: { runId: string; agentId: string; role: string; leaderId: string }) {
  return [
    { key: runIdKey, value: m.runId },
    { key: agentIdKey, value: m.agentId },
    { key: roleKey, value: m.role },
    { key: leaderIdKey, value: m.leaderId },
    { key: statusKey, value: 'active' },
  ];
}
