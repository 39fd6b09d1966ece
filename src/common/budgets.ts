import { z } from 'zod';
import { jsonSetting } from './jsonSetting';
import type { AgentUsage, HeldUsage } from './stores/eventStore';

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

/** What the model proxy saw when it stopped an agent: which budget, what was counted, and its limit. */
export interface BudgetSpent {
  /** `agent`: the budget of the agent's skill; `run`: the run's, shared by all its agents. */
  budget: 'agent' | 'run';
  measure: 'tokens' | 'turns';
  used: number;
  limit: number;
}

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
  const own = ownBudget(budgets, skill);
  const ownSpent = own && mine ? over('agent', own, mine.input_tokens + mine.output_tokens, mine.requests) : null;
  if (ownSpent) return ownSpent;
  if (!budgets.run) return null;
  return over('run', budgets.run, sum(usage, (u) => u.input_tokens + u.output_tokens), sum(usage, (u) => u.requests));
}

/** A request held back: those in flight may spend the budget; once they end, it is let through or the budget is spent. */
export interface BudgetBusy {
  budget: BudgetSpent['budget'];
  measure: BudgetSpent['measure'];
}

/**
 * Whether a model request may be forwarded, given what was answered and
 * what is in flight (`held`, claimed before forwarding). A turn budget is
 * never exceeded: answered plus in flight stay within it. For tokens each
 * request in flight holds an upper bound of what it may use (`estimate`:
 * its body's bytes plus its max_tokens); a request is let through while
 * answered plus held plus its own bound stay within the limit, or when
 * nothing else of that budget is in flight and the budget is not spent:
 * that one request may cross the limit, and nothing else runs beside it.
 */
export function admitModelRequest(
  budgets: Budgets,
  used: AgentUsage[],
  held: HeldUsage[],
  agentId: string,
  skill: string | null,
  estimate: number,
): { spent: BudgetSpent } | { busy: BudgetBusy } | null {
  const spent = spentBudget(budgets, used, agentId, skill);
  if (spent) return { spent };
  const own = ownBudget(budgets, skill);
  const mine = held.find((h) => h.agent_id === agentId);
  const myUse = used.find((u) => u.agent_id === agentId);
  const ownBusy = own && mine ? crowded('agent', own, myUse ? myUse.input_tokens + myUse.output_tokens : 0, myUse?.requests ?? 0, mine, estimate) : null;
  if (ownBusy) return { busy: ownBusy };
  if (!budgets.run || held.length === 0) return null;
  const inFlight = { requests: sum(held, (h) => h.requests), tokens: sum(held, (h) => h.tokens) };
  const runBusy = crowded('run', budgets.run, sum(used, (u) => u.input_tokens + u.output_tokens), sum(used, (u) => u.requests), inFlight, estimate);
  return runBusy ? { busy: runBusy } : null;
}

function ownBudget(budgets: Budgets, skill: string | null): Budget | undefined {
  return skill !== null ? (budgets.skills?.[skill] ?? budgets.agent) : budgets.agent;
}

const sum = <T>(rows: T[], of: (row: T) => number) => rows.reduce((n, row) => n + of(row), 0);

function crowded(scope: BudgetSpent['budget'], b: Budget, tokens: number, turns: number, held: { requests: number; tokens: number }, estimate: number): BudgetBusy | null {
  if (held.requests === 0) return null;
  if (b.turns !== undefined && turns + held.requests + 1 > b.turns) return { budget: scope, measure: 'turns' };
  if (b.tokens !== undefined && tokens + held.tokens + estimate > b.tokens) return { budget: scope, measure: 'tokens' };
  return null;
}

function over(scope: BudgetSpent['budget'], b: Budget, tokens: number, turns: number): BudgetSpent | null {
  if (b.tokens !== undefined && tokens >= b.tokens) return { budget: scope, measure: 'tokens', used: tokens, limit: b.tokens };
  if (b.turns !== undefined && turns >= b.turns) return { budget: scope, measure: 'turns', used: turns, limit: b.turns };
  return null;
}

