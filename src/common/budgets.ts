import { z } from 'zod';
import { jsonSetting } from './jsonSetting';
import type { AgentUsage } from './stores/eventStore';
import type { BudgetSpent } from '../../workflows/agent/messages';

const limit = z.number().int().positive();
const budget = z.strictObject({ tokens: limit.optional(), turns: limit.optional() });
/**
 * DIPPER_MODEL_BUDGETS: `run` is shared by every agent of a run; `skills`
 * holds each of that skill's agents to its own; `agent` is the budget of an
 * agent whose skill has none. Tokens are input (cache included) plus output;
 * a turn is one answered model request.
 */
export const budgetsSchema = z.strictObject({ run: budget.optional(), agent: budget.optional(), skills: z.record(z.string(), budget).optional() });
export type Budget = z.infer<typeof budget>;
export type Budgets = z.infer<typeof budgetsSchema>;

export function parseBudgets(raw: string | undefined): Budgets | undefined {
  if (!raw) return undefined;
  return jsonSetting('DIPPER_MODEL_BUDGETS', raw, budgetsSchema, '{"run": {"tokens": N, "turns": N}, "agent": {...}, "skills": {"name": {...}}}');
}

/**
 * The first budget an agent has spent, or null. Checked before each model
 * request: the request that crosses a budget is answered, the next refused.
 */
export function spentBudget(budgets: Budgets, usage: AgentUsage[], agentId: string, skill: string | null): BudgetSpent | null {
  const mine = usage.find((u) => u.agent_id === agentId);
  const own = skill !== null ? (budgets.skills?.[skill] ?? budgets.agent) : budgets.agent;
  const ownSpent = own && mine ? over('agent', own, mine.input_tokens + mine.output_tokens, mine.requests) : null;
  if (ownSpent) return ownSpent;
  if (!budgets.run) return null;
  const tokens = usage.reduce((sum, u) => sum + u.input_tokens + u.output_tokens, 0);
  const turns = usage.reduce((sum, u) => sum + u.requests, 0);
  return over('run', budgets.run, tokens, turns);
}

function over(scope: BudgetSpent['budget'], b: Budget, tokens: number, turns: number): BudgetSpent | null {
  if (b.tokens !== undefined && tokens >= b.tokens) return { budget: scope, measure: 'tokens', used: tokens, limit: b.tokens };
  if (b.turns !== undefined && turns >= b.turns) return { budget: scope, measure: 'turns', used: turns, limit: b.turns };
  return null;
}

