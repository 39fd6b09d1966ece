import { launchQuery } from '../../workflows/agent/messages';
import { BridgeClient } from '../common/isphere/bridgeClient';
import type { IsphereConfig } from '../config';
import type { Temporal } from '../temporal';
import type { Caller, TeamWorkflows } from '../registry/capabilities';
import { BridgeConnector, LocalReadonlyConnector, MockConnector, Sources, UnavailableConnector, type Connector } from './connectors';
import { Approvals } from './approvals';
import { AccessPolicy, type Reader } from './policy';

/** Agents whose skill is held; a skill never changes for an agent, so only the count is bounded. */
const SKILLS_HELD = 10_000;
/** Leaders looked up above an agent at most: deeper than any team may nest (src/common/pure/limits.ts), so a loop cannot spin. */
const MAX_CHAIN = 64;

/**
 * What the isphere tools work with in the gateway: the configured sources,
 * the operator's access policy, the result budget, and who the caller is
 * (run and skill, from its token and its own workflow, never from input).
 */
export class IsphereService {
  private readonly skills = new Map<string, { skill: string; role: string; leaderId: string | null; host?: string }>();

  constructor(
    readonly sources: Sources,
    readonly policy: AccessPolicy,
    readonly budgetBytes: number,
    private readonly team: TeamWorkflows,
    readonly approvals: Approvals,
    readonly sends: IsphereConfig['sends'],
    /** Where file operations run (the shared queue; a pinned run's host queue is derived from it) and how long a call waits for one. */
    readonly files: { taskQueue: string; waitMs: number },
  ) {}

  /** The caller as the access policy sees it: its skill and its leaders' skills, up to the root. */
  async reader(caller: Caller): Promise<Reader> {
    const own = await this.identity(caller);
    const leaders: string[] = [];
    for (let at = own.leaderId; at !== null && leaders.length < MAX_CHAIN; ) {
      const leader = await this.identity({ runId: caller.runId, agentId: at });
      leaders.push(leader.skill);
      at = leader.leaderId;
    }
    return { runId: caller.runId, skill: own.skill, leaders };
  }

  /** An agent's skill, role, leader and host (a pinned run's), from its own workflow (once per agent). */
  async identity(caller: Pick<Caller, 'runId' | 'agentId'>): Promise<{ skill: string; role: string; leaderId: string | null; host?: string }> {
    const key = `${caller.runId}/${caller.agentId}`;
    let held = this.skills.get(key);
    if (held === undefined) {
      const launch = await this.team.query(this.team.agent(caller.runId, caller.agentId), launchQuery);
      held = { skill: launch.identity.skill, role: launch.identity.role, leaderId: launch.identity.leaderId, ...(launch.identity.host ? { host: launch.identity.host } : {}) };
      if (this.skills.size >= SKILLS_HELD) this.skills.delete(this.skills.keys().next().value!);
      this.skills.set(key, held);
    }
    return held;
  }
}

/** The sources configuration names: bridge when a URL is set, the local store when a file is, uia and network always (declared, unavailable). */
/** `team.temporal`: approvals are started, counted and read as workflows of their own, outside any one tool call's bound. */
export function isphereService(config: IsphereConfig, team: TeamWorkflows & { readonly temporal: Temporal }, taskQueue: string, decisionKeys: readonly string[]): IsphereService {
  const connectors: Connector[] = [new UnavailableConnector('uia'), new UnavailableConnector('network')];
  if (config.bridgeUrl) connectors.push(new BridgeConnector(new BridgeClient({ baseUrl: config.bridgeUrl, token: config.bridgeToken ?? '', timeoutMs: config.bridgeTimeoutMs })));
  if (config.localStore) connectors.push(new LocalReadonlyConnector(config.localStore));
  const mock = config.connector === 'mock' ? new MockConnector() : undefined;
  const approvals = new Approvals(team.temporal, taskQueue, config, Math.max(1000, team.callTimeoutMs - 2000), decisionKeys);
  const files = { taskQueue, waitMs: Math.max(1000, team.callTimeoutMs - 2000) };
  return new IsphereService(new Sources(connectors, mock), AccessPolicy.load(config.policyFile), config.resultBudgetBytes, team, approvals, config.sends, files);
}
