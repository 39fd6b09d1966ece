import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import { buildTasks, findCycle, isFinished, readyIds, refreshReadiness, unmetDeps, validatePlan } from '../../workflows/agent/plan';
import type { PlanTaskSpec } from '../../workflows/types';

function spec(id: string, depends_on?: string[]): PlanTaskSpec {
  return { id, role: `${id}-role`, skill: 'worker', task: `Do ${id}.`, ...(depends_on ? { depends_on } : {}) };
}

/** The refusal validatePlan throws: its type is the spec's code, details[0] its extra fields. */
function refusal(specs: PlanTaskSpec[]): { code: string; extra: Record<string, unknown>; nonRetryable: boolean } {
  try {
    validatePlan(specs);
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    const failure = err as ApplicationFailure;
    return { code: failure.type ?? '', extra: failure.details?.[0] as Record<string, unknown>, nonRetryable: failure.nonRetryable === true };
  }
  throw new Error('validatePlan accepted the plan');
}

/** A cycle is a closed chain whose every hop follows a depends_on edge. */
function expectClosedChain(cycle: string[], specs: PlanTaskSpec[]): void {
  expect(cycle.length).toBeGreaterThanOrEqual(2);
  expect(cycle[0]).toBe(cycle[cycle.length - 1]);
  const deps = new Map(specs.map((s) => [s.id, s.depends_on ?? []]));
  for (let i = 0; i + 1 < cycle.length; i++) expect(deps.get(cycle[i])).toContain(cycle[i + 1]);
  expect(new Set(cycle.slice(1)).size).toBe(cycle.length - 1);
}

describe('validatePlan', () => {
  it('accepts a DAG', () => {
    expect(() => validatePlan([spec('a'), spec('b', ['a']), spec('c', ['a', 'b'])])).not.toThrow();
  });

  it.each<[string, PlanTaskSpec[], Record<string, unknown>]>([
    ['empty_plan', [], {}],
    ['duplicate_task_id', [spec('a'), spec('b'), spec('a')], { task_id: 'a' }],
    ['self_dep', [spec('a'), spec('b', ['a', 'b'])], { task_id: 'b' }],
    ['unknown_dep', [spec('a', ['zz'])], { task_id: 'a', dep: 'zz' }],
    ['cycle_detected', [spec('a', ['b']), spec('b', ['a'])], { cycle: ['a', 'b', 'a'] }],
  ])('refuses with %s and its extra fields, non-retryable', (code, specs, extra) => {
    const r = refusal(specs);
    expect(r.code).toBe(code);
    expect(r.extra).toEqual(extra);
    expect(r.nonRetryable).toBe(true);
  });

  it.each<[string, PlanTaskSpec[], string]>([
    ['duplicates before bad dependencies', [spec('a', ['zz']), spec('a', ['a'])], 'duplicate_task_id'],
    ['duplicates before cycles', [spec('a', ['b']), spec('b', ['a']), spec('b')], 'duplicate_task_id'],
    ['bad dependencies before cycles', [spec('a', ['b']), spec('b', ['a']), spec('c', ['zz'])], 'unknown_dep'],
    ['a self dependency before a later unknown one', [spec('a', ['a', 'zz'])], 'self_dep'],
    ['an unknown dependency before a later self one', [spec('a', ['zz', 'a'])], 'unknown_dep'],
    ['a self dependency rather than a one-node cycle', [spec('a', ['a'])], 'self_dep'],
  ])('reports %s', (_name, specs, code) => {
    expect(refusal(specs).code).toBe(code);
  });

  it('names a closed chain of ids for a longer cycle behind an acyclic prefix', () => {
    const specs = [spec('start'), spec('x', ['start', 'z']), spec('y', ['x']), spec('z', ['y']), spec('end', ['z'])];
    const r = refusal(specs);
    expect(r.code).toBe('cycle_detected');
    const cycle = r.extra.cycle as string[];
    expectClosedChain(cycle, specs);
    expect(new Set(cycle)).toEqual(new Set(['x', 'y', 'z']));
  });
});

describe('findCycle', () => {
  it('returns null for a diamond, where a node is reached twice without a cycle', () => {
    expect(findCycle([spec('a'), spec('b', ['a']), spec('c', ['a']), spec('d', ['b', 'c'])])).toBeNull();
  });

  it('treats missing depends_on as none', () => {
    expect(findCycle([spec('a'), spec('b')])).toBeNull();
  });
});

describe('buildTasks and readiness', () => {
  it('starts tasks without dependencies ready and the rest blocked, with defaults filled in', () => {
    const tasks = buildTasks([spec('a'), { ...spec('b', ['a']), model: 'm1', description: 'B' }, spec('c', ['a', 'b'])]);
    expect(tasks.map((t) => [t.id, t.status])).toEqual([
      ['a', 'ready'],
      ['b', 'blocked'],
      ['c', 'blocked'],
    ]);
    expect(tasks[0]).toEqual({ id: 'a', role: 'a-role', skill: 'worker', task: 'Do a.', description: '', depends_on: [], status: 'ready' });
    expect(tasks[0]).not.toHaveProperty('model');
    expect(tasks[1]).toMatchObject({ model: 'm1', description: 'B' });
  });

  it('moves a task to ready only when every dependency is done, and reports only the ones that moved', () => {
    const tasks = buildTasks([spec('a'), spec('b'), spec('c', ['a', 'b']), spec('d', ['c'])]);
    const [a, b, c] = tasks;
    expect(unmetDeps(tasks, c)).toEqual(['a', 'b']);

    a.status = 'done';
    expect(refreshReadiness(tasks)).toEqual([]);
    expect(unmetDeps(tasks, c)).toEqual(['b']);

    b.status = 'in_flight';
    expect(refreshReadiness(tasks)).toEqual([]);
    b.status = 'done';
    expect(refreshReadiness(tasks)).toEqual(['c']);
    // d waits on c, which is only ready, not done: readiness does not cascade.
    expect(readyIds(tasks)).toEqual(['c']);
    expect(refreshReadiness(tasks)).toEqual([]);
  });

  it('keeps the dependents of a failed task blocked', () => {
    const tasks = buildTasks([spec('a'), spec('b', ['a'])]);
    tasks[0].status = 'failed';
    expect(refreshReadiness(tasks)).toEqual([]);
    expect(tasks[1].status).toBe('blocked');
    expect(isFinished(tasks)).toBe(false);
  });

  it('is finished only when every task is done or failed', () => {
    const tasks = buildTasks([spec('a'), spec('b')]);
    expect(isFinished(tasks)).toBe(false);
    tasks[0].status = 'done';
    tasks[1].status = 'failed';
    expect(isFinished(tasks)).toBe(true);
  });
});

/** Random DAGs: task i may depend only on tasks before it, so the list is already in topological order. */
const dagArb = fc.integer({ min: 1, max: 30 }).chain((n) =>
  fc
    .tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => j))))
    .map((depLists) => depLists.map((deps, i) => spec(`t${i}`, deps.map((j) => `t${j}`)))),
);

/** A DAG plus a path in it; an edge from the path's start back to its end closes a cycle. */
const dagWithPathArb = dagArb
  .filter((specs) => specs.some((s) => (s.depends_on ?? []).length > 0))
  .chain((specs) => fc.tuple(fc.constant(specs), fc.integer({ min: 0, max: specs.length - 1 }), fc.infiniteStream(fc.nat())))
  .map(([specs, seed, picks]) => {
    const byId = new Map(specs.map((s) => [s.id, s]));
    // Start from a task with dependencies and walk down them to a root.
    const withDeps = specs.filter((s) => (s.depends_on ?? []).length > 0);
    let current = withDeps[seed % withDeps.length];
    const path = [current.id];
    for (const pick of picks) {
      const deps = current.depends_on ?? [];
      if (deps.length === 0) break;
      current = byId.get(deps[pick % deps.length])!;
      path.push(current.id);
    }
    return { specs, path };
  });

describe('validatePlan over random DAGs', () => {
  it('never finds a cycle in a graph given in topological order', () => {
    fc.assert(
      fc.property(dagArb, fc.boolean(), (specs, reverse) => {
        // The order tasks are declared in must not matter.
        const declared = reverse ? [...specs].reverse() : specs;
        expect(() => validatePlan(declared)).not.toThrow();
        expect(findCycle(declared)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('always refuses with cycle_detected once a back edge is added, naming a real cycle', () => {
    fc.assert(
      fc.property(dagWithPathArb, ({ specs, path }) => {
        const [head, tail] = [path[0], path[path.length - 1]];
        // head depends (transitively) on tail; tail depending on head closes the loop.
        const cyclic = specs.map((s) => (s.id === tail ? { ...s, depends_on: [...(s.depends_on ?? []), head] } : s));
        const r = refusal(cyclic);
        expect(r.code).toBe('cycle_detected');
        expectClosedChain(r.extra.cycle as string[], cyclic);
      }),
      { numRuns: 300 },
    );
  });

  it('makes ready exactly the tasks whose dependencies are all done', () => {
    fc.assert(
      fc.property(
        dagArb.chain((specs) => fc.tuple(fc.constant(specs), fc.array(fc.boolean(), { minLength: specs.length, maxLength: specs.length }))),
        ([specs, doneFlags]) => {
          const tasks = buildTasks(specs);
          tasks.forEach((t, i) => {
            if (doneFlags[i] && t.depends_on.every((d) => tasks.find((x) => x.id === d)!.status === 'done')) t.status = 'done';
          });
          tasks.forEach((t) => {
            if (t.status === 'ready') t.status = 'blocked';
          });
          refreshReadiness(tasks);
          const done = new Set(tasks.filter((t) => t.status === 'done').map((t) => t.id));
          for (const t of tasks) {
            if (t.status === 'done') continue;
            expect(t.status).toBe(t.depends_on.every((d) => done.has(d)) ? 'ready' : 'blocked');
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
