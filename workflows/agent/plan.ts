import { refuse } from '../errors';
import type { PlanTask, PlanTaskSpec } from '../types';

/**
 * Checks a declared DAG in the order the spec lists its errors, so the
 * caller always learns about the most basic problem first.
 */
export function validatePlan(specs: PlanTaskSpec[]): void {
  if (specs.length === 0) throw refuse('empty_plan', 'tasks is empty: declare at least one task.');
  const ids = new Set<string>();
  for (const t of specs) {
    if (ids.has(t.id)) throw refuse('duplicate_task_id', `Two tasks share the id "${t.id}".`, { task_id: t.id });
    ids.add(t.id);
  }
  for (const t of specs) {
    for (const dep of t.depends_on ?? []) {
      if (dep === t.id) throw refuse('self_dep', `Task "${t.id}" lists itself in depends_on.`, { task_id: t.id });
      if (!ids.has(dep)) {
        throw refuse('unknown_dep', `Task "${t.id}" depends on "${dep}", which is not declared.`, { task_id: t.id, dep });
      }
    }
  }
  const cycle = findCycle(specs);
  if (cycle) throw refuse('cycle_detected', `The plan has a cycle: ${cycle.join(' -> ')}.`, { cycle });
}

/**
 * Returns one cycle as an id chain that starts and ends at the same id, or
 * null. Iterative depth-first search: a long dependency chain must not
 * exhaust the stack inside a workflow.
 */
export function findCycle(specs: PlanTaskSpec[]): string[] | null {
  const deps = new Map(specs.map((t) => [t.id, t.depends_on ?? []]));
  const state = new Map<string, 'visiting' | 'done'>();
  for (const start of specs) {
    if (state.has(start.id)) continue;
    const path: string[] = [start.id];
    const next: number[] = [0];
    state.set(start.id, 'visiting');
    while (path.length > 0) {
      const id = path[path.length - 1];
      const edges = deps.get(id) ?? [];
      const i = next[next.length - 1]++;
      if (i >= edges.length) {
        state.set(id, 'done');
        path.pop();
        next.pop();
        continue;
      }
      const dep = edges[i];
      const seen = state.get(dep);
      if (seen === 'visiting') return [...path.slice(path.indexOf(dep)), dep];
      if (seen === undefined && deps.has(dep)) {
        state.set(dep, 'visiting');
        path.push(dep);
        next.push(0);
      }
    }
  }
  return null;
}

export function buildTasks(specs: PlanTaskSpec[]): PlanTask[] {
  const tasks: PlanTask[] = specs.map((s) => ({
    id: s.id,
    role: s.role,
    skill: s.skill,
    task: s.task,
    description: s.description ?? '',
    ...(s.model !== undefined ? { model: s.model } : {}),
    depends_on: s.depends_on ?? [],
    status: 'blocked',
  }));
  refreshReadiness(tasks);
  return tasks;
}

type StatusById = Map<string, PlanTask['status']>;

function statuses(tasks: PlanTask[]): StatusById {
  return new Map(tasks.map((t) => [t.id, t.status]));
}

export function unmetDeps(tasks: PlanTask[] | StatusById, task: PlanTask): string[] {
  const byId = tasks instanceof Map ? tasks : statuses(tasks);
  return task.depends_on.filter((d) => byId.get(d) !== 'done');
}

/**
 * Moves blocked tasks whose dependencies are all done to ready; returns the
 * ids that moved. Only done tasks unblock others, so one pass over a
 * status snapshot is enough.
 */
export function refreshReadiness(tasks: PlanTask[]): string[] {
  const byId = statuses(tasks);
  const moved: string[] = [];
  for (const t of tasks) {
    if (t.status === 'blocked' && unmetDeps(byId, t).length === 0) {
      t.status = 'ready';
      moved.push(t.id);
    }
  }
  return moved;
}

export function readyIds(tasks: PlanTask[]): string[] {
  return tasks.filter((t) => t.status === 'ready').map((t) => t.id);
}

export function isFinished(tasks: PlanTask[]): boolean {
  return tasks.every((t) => t.status === 'done' || t.status === 'failed');
}
