import { randomUUID } from 'node:crypto';
import type { EventStore } from '../common/stores/eventStore';
import { admitModelRequest, type Budgets } from '../common/budgets';
import { runtimeFor, type DipperConfig, type RuntimeChoice } from '../config';
import { safeMessage, type Logger } from '../log';
import type { Caller } from '../registry/capabilities';
import { budgetSpentSignal, launchQuery } from '../../workflows/agent/messages';
import type { BudgetSpent } from '../common/budgets';
import type { TeamClient } from './teamClient';

/** Skills remembered per agent (an agent's skill never changes); past this many the oldest go. */
const SKILLS_KEPT = 10_000;
/**
 * How long a claim holds its budget when its gateway never settles it (the
 * gateway died mid-answer): longer than a model answer takes, so a live
 * request's claim never lapses under it.
 */
export const CLAIM_LAPSE_MS = 30 * 60_000;
/** When a request held back because others in flight may spend the budget is worth trying again. */
const BUSY_RETRY_SECONDS = 2;

/** Tokens one model request used, as the Messages API reports them. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
}

/** A refusal in the Messages API's own terms, which the agent's CLI understands (and retries, for 429 and 529). */
export interface ModelRefusal {
  status: number;
  type: string;
  message: string;
  retryAfter?: number;
}

/** A request let through: `settle` counts its answer (null: not answered) and ends its claim on the budgets. */
export interface ModelPass {
  settle(usage: ModelUsage | null): Promise<void>;
}

/**
 * Who may use the model proxy, and how much. Only agents whose runtime
 * talks to the model (kind `claude`) may call it: any other agent's token
 * would spend the operator's key on a model its runtime never asked for.
 * A counted request claims its share of the budgets in the event store
 * before it is forwarded, in a step no other replica interleaves with
 * (src/common/budgets.ts says how much it may claim), and its answer's
 * usage replaces the claim when it ends, so concurrency cannot spend a
 * budget twice. An agent over budget is told to its workflow once per
 * launch, which stops it (and retires that launch's token); until then
 * each of its requests is refused.
 */
export class ModelGate {
  private readonly skills = new Map<string, string>();
  private readonly told = new Set<string>();
  private readonly kinds: Set<RuntimeChoice['kind']>;
  private readonly countsTokens: boolean;

  constructor(
    private readonly runtimes: DipperConfig['runtimes'],
    private readonly budgets: Budgets | undefined,
    private readonly events: EventStore,
    private readonly team: TeamClient,
    private readonly log: Logger,
  ) {
    this.kinds = new Set([runtimes.default, ...Object.values(runtimes.bySkill)].map((c) => c.kind));
    this.countsTokens = budgets !== undefined && [budgets.run, budgets.agent, ...Object.values(budgets.skills ?? {})].some((b) => b?.tokens !== undefined);
  }

  /**
   * `gen`: the launch the caller's token was given to. `bound`: the most
   * tokens the request can use (read only when a budget counts tokens), or
   * null for a request that is not counted (count_tokens, which the
   * endpoint does not bill).
   */
  async enter(caller: Caller, gen: number, bound: (() => number) | null): Promise<ModelPass | ModelRefusal> {
    if (!(await this.usesModel(caller))) {
      return { status: 403, type: 'permission_error', message: "Dipper's model proxy serves agents of the claude runtime only; this agent's runtime does not use it." };
    }
    if (bound === null) return { settle: async () => undefined };
    const estimate = this.countsTokens ? bound() : 0;
    const claim = { claim_id: randomUUID(), run_id: caller.runId, agent_id: caller.agentId, tokens: estimate, at: Date.now() };
    const budgets = this.budgets;
    if (budgets) {
      const skill = budgets.skills ? await this.skillOf(caller) : null;
      const refusal = await this.events.claimModelUse(claim, claim.at - CLAIM_LAPSE_MS, (used, held) => admitModelRequest(budgets, used, held, caller.agentId, skill, estimate));
      if (refusal && 'spent' in refusal) {
        this.stop(caller, gen, refusal.spent);
        const whose = refusal.spent.budget === 'run' ? "the run's" : "this agent's";
        return { status: 403, type: 'permission_error', message: `Dipper stopped this agent: ${whose} ${refusal.spent.measure} budget is spent (${refusal.spent.used} used of ${refusal.spent.limit}).` };
      }
      if (refusal) {
        const whose = refusal.busy.budget === 'run' ? "the run's" : "this agent's";
        const message = `Dipper holds this request: the requests in flight may spend ${whose} ${refusal.busy.measure} budget; try again when they end.`;
        return { status: 429, type: 'rate_limit_error', message, retryAfter: BUSY_RETRY_SECONDS };
      }
    }
    // Each answer's tokens are an event of the agent's (`model.usage`): the run's record of what its model cost.
    const event = (usage: ModelUsage) => ({ event_id: claim.claim_id, run_id: caller.runId, agent_id: caller.agentId, type: 'model.usage', ts: Date.now(), data: { ...usage } });
    return {
      settle: (usage) =>
        this.events.settleModelUse(claim.claim_id, usage && event(usage)).catch((err: unknown) => {
          // The claim lapses in CLAIM_LAPSE_MS; the answer's usage is lost, as it would be if this gateway died here.
          this.log.warn({ run: caller.runId, agent: caller.agentId, err: safeMessage(err) }, 'model usage not recorded');
        }),
    };
  }

  private async usesModel(caller: Caller): Promise<boolean> {
    if (!this.kinds.has('claude')) return false;
    if (this.kinds.size === 1) return true;
    return runtimeFor(this.runtimes, await this.skillOf(caller)).kind === 'claude';
  }

  private async skillOf(caller: Caller): Promise<string> {
    const key = `${caller.runId}/${caller.agentId}`;
    const known = this.skills.get(key);
    if (known !== undefined) return known;
    const view = await this.team.query(this.team.agent(caller.runId, caller.agentId), launchQuery);
    if (this.skills.size >= SKILLS_KEPT) this.skills.delete(this.skills.keys().next().value!);
    this.skills.set(key, view.identity.skill);
    return view.identity.skill;
  }

  private stop(caller: Caller, gen: number, spent: BudgetSpent): void {
    const key = `${caller.runId}/${caller.agentId}/${gen}`;
    if (this.told.has(key)) return;
    this.team
      .agent(caller.runId, caller.agentId)
      .signal(budgetSpentSignal, spent)
      .then(() => {
        if (this.told.size >= SKILLS_KEPT) this.told.delete(this.told.values().next().value!);
        this.told.add(key);
      })
      .catch((err: unknown) => this.log.warn({ run: caller.runId, agent: caller.agentId, err: safeMessage(err) }, 'budget stop not sent; sent again at its next request'));
  }
}
