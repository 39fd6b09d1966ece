import { z } from 'zod';
import type { PlanTaskSpec } from '../../../workflows/types';
import { declarePlanUpdate, listReadyQuery, removePlanUpdate, updatePlanTaskUpdate } from '../../../workflows/agent/messages';
import { invalidInput, ToolError } from '../../common/toolErrors';
import { beidouTool, callerHandle, checkBytes, checkSkills, id, taskId } from './common';

const taskSpec = z.strictObject({
  id: taskId(
    'Your id for this task, unique within the plan; the join key for spawn_agent and depends_on, and the name of its artifacts folder. 1 to 64 of A-Z a-z 0-9 . _ -, starting with a letter or digit, no "..".',
  ),
  role: z.string().min(1).max(200).describe('Display name of the agent that will run this task.'),
  skill: z.string().min(1).max(128).describe('Skill name (a SKILL.md); checked to exist now, loaded at spawn.'),
  task: z.string().min(1).describe("The spawned agent's first user message; must be self-contained."),
  description: z.string().optional().describe('Substituted into {role_description}. Defaults to "".'),
  model: z.string().min(1).max(200).optional().describe('Model override for this task.'),
  depends_on: z.array(taskId('A task id of this plan.')).optional().describe('Task ids of this plan that must be done first. Defaults to [].'),
});

/** A whole plan, which the leader's workflow keeps in its state: 512 KiB leaves room under Temporal's 2 MiB. */
const MAX_PLAN_BYTES = 512 * 1024;

const status = z.enum(['ready', 'blocked', 'in_flight', 'done', 'failed']);

export const declarePlan = beidouTool({
  name: 'declare_plan',
  title: 'Declare a plan',
  description:
    'Declare your plan as a DAG of tasks. Validates ids, dependencies and skills, persists the plan and makes it your active plan; spawns nothing (use spawn_agent per ready task). Fails with plan_already_declared if you have one: remove_plan first to replan.',
  permission: 'agent_mutation',
  // A repeat is refused (plan_already_declared); the leader's workflow orders plan changes.
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({ tasks: z.array(taskSpec).describe('One entry per node of the DAG.') }),
  output: z.object({
    plan_id: z.string(),
    plan_path: z.string(),
    tasks: z.array(z.object({ id: z.string(), role: z.string(), skill: z.string(), depends_on: z.array(z.string()), status })),
  }),
  async handler({ tasks }, ctx) {
    if (tasks.length > ctx.limits.maxPlanTasks) {
      throw invalidInput('tasks', `A plan holds at most ${ctx.limits.maxPlanTasks} tasks; got ${tasks.length}.`);
    }
    checkBytes('tasks', JSON.stringify(tasks), MAX_PLAN_BYTES);
    if (tasks.length > 0) await checkSkills(ctx, tasks, 'tasks');
    // Long task texts and descriptions go to the content store; the plan in the leader's state refers to them.
    const call = ctx.content.keeper(ctx.caller.runId);
    const stored: PlanTaskSpec[] = [];
    for (const t of tasks) stored.push({ ...t, task: await call.keep(t.task), ...(t.description === undefined ? {} : { description: await call.keep(t.description) }) });
    return ctx.content.around(call.kept, () => ctx.team.update(callerHandle(ctx), declarePlanUpdate, [{ tasks: stored }]));
  },
});

export const removePlan = beidouTool({
  name: 'remove_plan',
  title: 'Remove your plan',
  description:
    'Remove your active plan so a new one can be declared. Refused with plan_in_use while any task is in flight; the team and workspace stay, and the removed plan is kept on record.',
  permission: 'agent_mutation',
  // A repeat is refused (no_active_plan).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({}),
  output: z.object({ removed_plan_id: z.string() }),
  async handler(_input, ctx) {
    return ctx.team.update(callerHandle(ctx), removePlanUpdate, []);
  },
});

export const listReady = beidouTool({
  name: 'list_ready',
  title: 'List ready tasks',
  description: 'List the task ids of your active plan that are ready to spawn (all dependencies done). Read-only.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  input: z.strictObject({}),
  output: z.object({ ready: z.array(z.string()) }),
  async handler(_input, ctx) {
    const result = await ctx.team.query(callerHandle(ctx), listReadyQuery);
    if (!result) throw new ToolError('no_active_plan', 'You have no active plan; declare_plan first.');
    return result;
  },
});

export const updatePlanTask = beidouTool({
  name: 'update_plan_task',
  title: 'Mark a plan task done or failed',
  description:
    'Record that a task of your active plan is done or failed when you did it yourself or it will not be done; status is set once. Tasks run by a live child are settled by terminate_child instead. Returns the tasks this made ready.',
  permission: 'agent_mutation',
  // Set once: a repeat is refused (invalid_transition).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({
    task_id: id('Id of a task in your active plan.'),
    status: z.enum(['done', 'failed']).describe('The final status to record.'),
    note: z.string().max(4096).optional().describe('Why, for the record.'),
  }),
  output: z.object({ task_id: z.string(), status: z.enum(['done', 'failed']), newly_ready: z.array(z.string()) }),
  async handler(input, ctx) {
    return ctx.team.update(callerHandle(ctx), updatePlanTaskUpdate, [input]);
  },
});
