import { z } from 'zod';
import { agentteamTool, boardOf, channel } from './common';
import { taskError } from './errors';

export const taskSetClaim = agentteamTool({
  name: 'task_set_claim',
  title: 'Claim or release tasks',
  description:
    'Make yourself the assignee of up to 50 tasks of one board (claimed: true), or give them up (claimed: false). It sets that state, so repeating it is harmless; tasks another agent holds are reported as failures, one by one.',
  permission: 'agent_mutation',
  idempotency: 'desired_state',
  concurrency: 'none',
  input: z.strictObject({
    channel,
    numbers: z.array(z.number().int().min(1)).min(1).max(50).describe('Task numbers on that board (1-50, no repeats).'),
    claimed: z.boolean().describe('true: you hold them afterwards; false: you no longer hold them.'),
  }),
  output: z.object({
    changed: z.number().int().describe('Tasks brought to the requested state by this call.'),
    unchanged: z.number().int().describe('Tasks that were already in it.'),
    failures: z.array(z.object({ number: z.number().int(), code: z.string(), message: z.string() })),
  }),
  async handler({ channel: board, numbers, claimed }, ctx) {
    const seen = new Set<number>();
    for (const [i, n] of numbers.entries()) {
      if (seen.has(n)) throw taskError('invalid_input', `Task number ${n} is listed twice.`, { fieldErrors: { [`numbers[${i}]`]: 'repeated' } });
      seen.add(n);
    }
    const answer = await boardOf(ctx).mutate(ctx.caller, 'set_claim', { channel: board, numbers, claimed }, { tool: 'task_set_claim', retrySafe: true, about: { channel: board } });
    const failures = (Array.isArray(answer.failures) ? answer.failures : []) as Record<string, unknown>[];
    return {
      changed: Number(answer.changed ?? 0),
      unchanged: Number(answer.unchanged ?? 0),
      failures: failures.map((f) => ({ number: Number(f.number), code: String(f.code), message: String(f.message ?? '') })),
    };
  },
});
