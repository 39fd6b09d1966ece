import fs from 'node:fs';
import path from 'node:path';
import { admitModelRequest, parseBudgets, spentBudget } from '../../src/common/budgets';
import { tokenBound } from '../../src/gateway/modelProxy';

const usage = [
  { agent_id: 'ag_a', requests: 4, input_tokens: 900, output_tokens: 100 },
  { agent_id: 'ag_b', requests: 1, input_tokens: 50, output_tokens: 10 },
];

describe('model budgets', () => {
  it("hold an agent to its skill's budget, else the default agent budget, and the run to its own", () => {
    const budgets = parseBudgets(JSON.stringify({ run: { tokens: 2000 }, agent: { turns: 10 }, skills: { writer: { tokens: 1000 } } }))!;
    expect(spentBudget(budgets, usage, 'ag_a', 'writer')).toEqual({ budget: 'agent', measure: 'tokens', used: 1000, limit: 1000 });
    // Another skill has the default: 4 turns of 10 is within it.
    expect(spentBudget(budgets, usage, 'ag_a', 'reader')).toBeNull();
    expect(spentBudget(parseBudgets('{"agent":{"turns":4}}')!, usage, 'ag_a', null)).toEqual({ budget: 'agent', measure: 'turns', used: 4, limit: 4 });
    // The run's is the sum of every agent's, checked for any of them, one that has used nothing included.
    const run = parseBudgets('{"run":{"tokens":1060,"turns":9}}')!;
    expect(spentBudget(run, usage, 'ag_new', null)).toEqual({ budget: 'run', measure: 'tokens', used: 1060, limit: 1060 });
    expect(spentBudget(parseBudgets('{"run":{"turns":5}}')!, usage, 'ag_b', 'x')).toEqual({ budget: 'run', measure: 'turns', used: 5, limit: 5 });
    expect(spentBudget(parseBudgets('{"run":{"turns":6}}')!, usage, 'ag_b', 'x')).toBeNull();
  });

  it('let a request through only while those in flight cannot spend the budget, or when it runs alone', () => {
    const turns = parseBudgets('{"agent":{"turns":6}}')!;
    const inFlight = (requests: number, tokens = 0) => [{ agent_id: 'ag_a', requests, tokens }];
    // 4 answered, 1 in flight: a sixth fits; with 2 in flight it might not, so it waits (not spent: those may fail).
    expect(admitModelRequest(turns, usage, inFlight(1), 'ag_a', null, 10)).toBeNull();
    expect(admitModelRequest(turns, usage, inFlight(2), 'ag_a', null, 10)).toEqual({ busy: { budget: 'agent', measure: 'turns' } });
    // Another agent's requests in flight are not this agent's: its own budget has room.
    expect(admitModelRequest(turns, usage, [{ agent_id: 'ag_b', requests: 9, tokens: 0 }], 'ag_a', null, 10)).toBeNull();
    // Tokens: 1000 used of 1500; a request may use at most its bound. Alone it goes through whatever its bound (it may cross);
    // beside another, only if both bounds fit.
    const tokens = parseBudgets('{"agent":{"tokens":1500}}')!;
    expect(admitModelRequest(tokens, usage, [], 'ag_a', null, 5000)).toBeNull();
    expect(admitModelRequest(tokens, usage, inFlight(1, 200), 'ag_a', null, 300)).toBeNull();
    expect(admitModelRequest(tokens, usage, inFlight(1, 200), 'ag_a', null, 301)).toEqual({ busy: { budget: 'agent', measure: 'tokens' } });
    // The run's budget counts every agent's requests in flight.
    const run = parseBudgets('{"run":{"turns":7}}')!;
    expect(admitModelRequest(run, usage, [{ agent_id: 'ag_b', requests: 1, tokens: 0 }], 'ag_a', null, 1)).toBeNull();
    expect(admitModelRequest(run, usage, [{ agent_id: 'ag_b', requests: 2, tokens: 0 }], 'ag_a', null, 1)).toEqual({ busy: { budget: 'run', measure: 'turns' } });
    // Spent is spent, whatever is in flight.
    expect(admitModelRequest(parseBudgets('{"agent":{"turns":4}}')!, usage, [], 'ag_a', null, 1)).toEqual({ spent: { budget: 'agent', measure: 'turns', used: 4, limit: 4 } });
  });

  it("bound a request's tokens by its body's bytes and its max_tokens, and assume the most when it names none", () => {
    const body = Buffer.from(JSON.stringify({ model: 'm', max_tokens: 700, messages: [{ role: 'user', content: 'ünï "max_tokens": 1' }] }));
    expect(tokenBound(body)).toBe(body.length + 700);
    expect(tokenBound(Buffer.from('{"max_tokens": -5}'))).toBe(18 + 128_000);
    expect(tokenBound(Buffer.from('not json'))).toBe(8 + 128_000);
  });

  it("take the README's example as written", () => {
    const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');
    const example = /`DIPPER_MODEL_BUDGETS` caps[^`]*`(\{[^`]+\})`/.exec(readme)?.[1];
    expect(example).toBeDefined();
    expect(parseBudgets(example)).toEqual({ run: { tokens: 2000000 }, agent: { turns: 200 }, skills: { writer: { tokens: 300000, turns: 60 } } });
  });

  it('are refused at start-up when malformed, naming the field', () => {
    expect(parseBudgets(undefined)).toBeUndefined();
    expect(() => parseBudgets('{run:')).toThrow(/must be JSON/);
    expect(() => parseBudgets('{"run":{"tokens":0}}')).toThrow(/DIPPER_MODEL_BUDGETS run\.tokens/);
    expect(() => parseBudgets('{"skills":{"w":{"turn":3}}}')).toThrow(/DIPPER_MODEL_BUDGETS skills\.w/);
    expect(() => parseBudgets('{"runs":{}}')).toThrow(/DIPPER_MODEL_BUDGETS/);
  });
});
