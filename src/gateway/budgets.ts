import type { EventStore } from '../common/stores/eventStore';
import { spentBudget, type Budgets } from '../common/budgets';
import { safeMessage, type Logger } from '../log';
import type { Caller } from '../registry/capabilities';
import { budgetSpentSignal, launchQuery, type BudgetSpent } from '../../workflows/agent/messages';
import type { TeamClient } from './teamClient';

/** Skills remembered per agent (an agent's skill never changes); past this many the oldest go. */
const SKILLS_KEPT = 10_000;

/**
 * The model proxy's budget check: usage from the event store (the proxy
 * writes it before answering, so the next request sees it), the agent's
 * skill from its workflow once. An agent over budget is told to its
 * workflow once per launch, which stops it (and retires that launch's
 * token); until then each of its requests is refused.
 */
export class BudgetGuard {
  private readonly skills = new Map<string, string>();
  private readonly told = new Set<string>();

  constructor(
    private readonly budgets: Budgets,
    private readonly events: EventStore,
    private readonly team: TeamClient,
    private readonly log: Logger,
  ) {}

  /** `gen`: the launch the caller's token was given to; each launch over budget is stopped once. */
  async check(caller: Caller, gen: number): Promise<BudgetSpent | null> {
    const usage = await this.events.modelUsage(caller.runId);
    const spent = spentBudget(this.budgets, usage, caller.agentId, await this.skillOf(caller));
    if (spent) this.stop(caller, gen, spent);
    return spent;
  }

  private async skillOf(caller: Caller): Promise<string | null> {
    if (!this.budgets.skills) return null;
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
