import fs from 'node:fs';
import path from 'node:path';
import { parseBudgets, spentBudget } from '../../src/common/budgets';

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
