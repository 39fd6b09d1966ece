import { refuse } from '../errors';

/**
 * The review gate of the reference notes: while any direct child of a
 * leader has a review pending, the leader may use only these tools.
 */
export const REVIEW_GATE_ALLOWED: readonly string[] = [
  'terminate_child',
  'send_message',
  'list_pending_reviews',
  'signal_review',
  'request_termination',
  'ask_user',
  'answer_question',
  'escalate_question',
];

/** The refusal, naming the reviews that wait and the tools the leader may use meanwhile. */
export function reviewGateRefusal(tool: string, pending: { agent_id: string; name: string | null; role: string; age_s: number | null }[]) {
  const names = pending.map((p) => `${p.name ?? p.role} (${p.agent_id})`).join(', ');
  return refuse(
    'review_gate_denied',
    `${tool} waits until you answer your children's pending reviews: ${names}. Until then you may use only ${REVIEW_GATE_ALLOWED.join(', ')}. ` +
      'Approve with terminate_child, or send rework with send_message.',
    {
      tool,
      pending_reviews: pending.map((p) => ({ agent_id: p.agent_id, name: p.name, role: p.role, age_s: p.age_s })),
      allowed_tools: [...REVIEW_GATE_ALLOWED],
    },
  );
}
