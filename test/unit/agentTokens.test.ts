import { AgentTokens, NoAgentToken, type TokenPair, type TokenRoutes } from '../../src/common/taskApi/tokens';

/** Token routes that count their calls and answer at once (or refuse when told). */
class Routes implements TokenRoutes {
  issued: string[][] = [];
  refreshed: string[] = [];
  refuseRefresh = false;
  refuseIssue = false;
  private n = 0;
  constructor(private readonly now: () => number) {}

  async issue(_agent: string, channels: string[]): Promise<TokenPair | null> {
    this.issued.push([...channels].sort());
    return this.refuseIssue ? null : this.pair();
  }

  async refresh(_agent: string, refreshToken: string): Promise<TokenPair | null> {
    this.refreshed.push(refreshToken);
    return this.refuseRefresh ? null : this.pair();
  }

  private pair(): TokenPair {
    const n = ++this.n;
    return { token: `t${n}`, refreshToken: `r${n}`, expiresAt: this.now() + 3_600_000 };
  }
}

let clock = 1_000_000;
const now = () => clock;
const agent = (...channels: string[]) => ({ agentId: 'ag_1', channels });

it('issues once and reuses the token while it is fresh and covers the boards asked for', async () => {
  const routes = new Routes(now);
  const tokens = new AgentTokens(routes, 'w', now);
  expect(await tokens.tokenFor(agent('run_a'))).toBe('t1');
  expect(await tokens.tokenFor(agent('run_a'))).toBe('t1');
  expect(routes.issued).toEqual([['run_a']]);
  // A board it was not issued with: a new token with both.
  expect(await tokens.tokenFor(agent('run_a', 'tm_b'))).toBe('t2');
  expect(routes.issued).toEqual([['run_a'], ['run_a', 'tm_b']]);
});

it('gives calls made at once for different boards a token that covers each', async () => {
  const routes = new Routes(now);
  const tokens = new AgentTokens(routes, 'w', now);
  const [one, two] = await Promise.all([tokens.tokenFor(agent('run_a')), tokens.tokenFor(agent('run_a', 'tm_b'))]);
  expect(one).toBe('t1');
  expect(two).toBe('t2');
  expect(routes.issued.at(-1)).toEqual(['run_a', 'tm_b']);
});

it('refreshes a token near its expiry before use, and after a 401 refreshes once, issuing anew when the refresh is refused', async () => {
  const routes = new Routes(now);
  const tokens = new AgentTokens(routes, 'w', now);
  await tokens.tokenFor(agent('run_a'));
  clock += 3_600_000 - 10_000;
  expect(await tokens.tokenFor(agent('run_a'))).toBe('t2');
  expect(routes.refreshed).toEqual(['r1']);
  expect(await tokens.refresh(agent('run_a'))).toBe('t3');
  expect(routes.refreshed).toEqual(['r1', 'r2']);
  routes.refuseRefresh = true;
  expect(await tokens.refresh(agent('run_a'))).toBe('t4');
  expect(routes.issued).toHaveLength(2);
});

it('fails when the service issues no token', async () => {
  const routes = new Routes(now);
  routes.refuseIssue = true;
  await expect(new AgentTokens(routes, 'w', now).tokenFor(agent('run_a'))).rejects.toBeInstanceOf(NoAgentToken);
});
