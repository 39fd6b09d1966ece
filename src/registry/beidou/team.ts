import { callKey } from '../../../workflows/receipts';
import { spawnWakes } from '../../../workflows/ids';
import { isStored } from '../../common/pure/content';
import { z } from 'zod';
import { randomUUID } from 'node:crypto';
import { createTeamUpdate, spawnAgentUpdate, spawnOutcomeUpdate, terminateChildUpdate } from '../../../workflows/agent/messages';
import type { Watch } from '../capabilities';
import { peerQuery } from '../../../workflows/run/messages';
import { ToolError } from '../../common/toolErrors';
import { agentId, beidouTool, callerHandle, checkBytes, checkSkills, id } from './common';

export const spawnAgent = beidouTool({
  name: 'spawn_agent',
  title: 'Spawn an agent for a plan task',
  description:
    'Start one agent for a ready task of your active plan. Your first spawn creates your team (team_created: true) and its workspace; the new agent gets the task text after a [TASK ASSIGNMENT] block. Returns the tasks still ready to spawn.',
  permission: 'agent_mutation',
  // No receipt: a repeat is refused (task_not_pending, naming the agent the first call started).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({ task_id: id('Id of a ready task in your active plan.') }),
  output: z.object({
    agent_id: z.string(),
    team_id: z.string(),
    task_id: z.string(),
    remaining_ready: z.array(z.string()),
    team_created: z.boolean(),
  }),
  async handler({ task_id }, ctx) {
    const runId = ctx.caller.runId;
    // The Update's id is the key its step announces on: watched before it is sent, so no word slips past.
    const key = randomUUID();
    const wakes = spawnWakes(key);
    const started = ctx.wakeups.watch(runId, wakes.started);
    const failed = ctx.wakeups.watch(runId, wakes.failed);
    try {
      const { confirm, ...answer } = await ctx.team.update(callerHandle(ctx), spawnAgentUpdate, [{ task_id }], key);
      if (!confirm) return answer;
      // The member runs once its step says so (having told the leader first); otherwise the leader says how it ended.
      if ((await firstWake(started, failed, ANNOUNCE_BACKSTOP_MS)) === 'started') return answer;
      return await ctx.team.update(callerHandle(ctx), spawnOutcomeUpdate, [{ agent_id: answer.agent_id }]);
    } finally {
      started.close();
      failed.close();
    }
  },
});

/**
 * How long a spawn waits for its step's word before it asks the leader: only
 * for a word that was lost (the feed's own backstop reads within a second).
 */
const ANNOUNCE_BACKSTOP_MS = 3_000;

/** Which of two watched wakes came first, if either came within `ms`. */
async function firstWake(started: Watch, failed: Watch, ms: number): Promise<'started' | 'failed' | 'neither'> {
  const done = new AbortController();
  try {
    return await Promise.race([
      started.next(ms, done.signal).then((woken) => (woken ? 'started' : 'neither')),
      failed.next(ms, done.signal).then((woken) => (woken ? 'failed' : 'neither')),
    ]);
  } finally {
    done.abort();
  }
}

const role = z.strictObject({
  role: z.string().min(1).max(200).describe('Display name of the member.'),
  skill: z.string().min(1).max(128).describe('Skill name (a SKILL.md).'),
  model: z.string().min(1).max(200).optional().describe('Model override for this member.'),
  description: z.string().describe("What THIS member must produce; substituted into its {role_description}."),
});

/** Rules go to every member and stay on the team record: 64 KiB of them is a long charter. */
const RULES_BYTES = 64 * 1024;
/** All member descriptions of one call, like a whole plan. */
const ROLES_BYTES = 512 * 1024;

export const createTeam = beidouTool({
  name: 'create_team',
  title: 'Create a team (deprecated)',
  description:
    'Deprecated: use declare_plan + spawn_agent for ordered work. Spawns a new team led by you with one member per role; every member receives the originating user task. Refuses identical member descriptions unless consensus=true.',
  permission: 'agent_mutation',
  // The leader keeps the answer of each call (workflows/receipts.ts): the same call again gets the same team.
  idempotency: 'call_receipt',
  concurrency: 'owner_serialized',
  deprecated: {
    replacement: 'declare_plan + spawn_agent',
    callable: 'Listed and served unchanged while its spec keeps it; its description and _meta.deprecated name the replacement.',
    removalGate: "When team-tool-surface.md drops it (once all callers have migrated); its calls show as createTeam Updates in leaders' histories.",
  },
  refusedFields: {
    leader_id: { code: 'leader_override_attempted', message: 'leader_id cannot be set: you lead the teams you create.' },
  },
  input: z.strictObject({
    name: z.string().min(1).max(200).describe('Human-readable team name.'),
    task: z.string().describe('Team-level coordination charter, recorded on the team; not sent to members.'),
    roles: z.array(role).min(1).max(100).describe('One entry per member.'),
    rules: z.array(z.string()).max(100).optional().describe('Coordination rules shown to each member. Defaults to [].'),
    consensus: z.boolean().optional().describe('Default false. true allows members with identical skill and description.'),
  }),
  output: z.object({ team_id: z.string(), members: z.array(z.object({ agent_id: z.string(), role: z.string() })) }),
  async handler(input, ctx) {
    // Each becomes workflow state (the team record, each member's launch), so each has a size, as content does.
    checkBytes('task', input.task, ctx.limits.maxContentBytes);
    checkBytes('rules', JSON.stringify(input.rules ?? []), RULES_BYTES);
    input.roles.forEach((r, i) => checkBytes(`roles[${i}].description`, r.description, ctx.limits.maxContentBytes));
    checkBytes('roles', JSON.stringify(input.roles), ROLES_BYTES);
    await checkSkills(ctx, input.roles, 'roles');
    // The same call sent again is known by its words, not by the references its texts get when stored again.
    const key = callKey('create_team', input);
    const call = ctx.content.keeper(ctx.caller.runId);
    const task = await call.keep(input.task);
    const roles = [];
    for (const r of input.roles) roles.push({ ...r, description: await call.keep(r.description) });
    // Long rules go to the store as one list: each member's start then carries a reference, not the rules.
    const keptRules = input.rules && (await call.keep(JSON.stringify(input.rules)));
    const rules = isStored(keptRules) ? keptRules : input.rules;
    const stored = { ...input, task, roles, ...(rules === undefined ? {} : { rules }), call_key: key };
    return ctx.content.around(call.kept, () => ctx.team.update(callerHandle(ctx), createTeamUpdate, [stored]));
  },
});

export const terminateChild = beidouTool({
  name: 'terminate_child',
  title: 'Terminate a child (approve)',
  description:
    "Approve a direct child's work and end it: posts a terminate sentinel to its inbox and marks its plan task done. Needs the child to have signalled a review or requested termination, unless force=true (audited; its task is marked failed).",
  permission: 'destructive',
  // A repeat is refused (already_terminating).
  idempotency: 'none',
  concurrency: 'owner_serialized',
  input: z.strictObject({
    agent_id: agentId('A member of a team you lead.'),
    force: z.boolean().optional().describe('Default false. true bypasses the review requirement; audited as terminate.forced.'),
  }),
  output: z.object({ sentinel_posted: z.literal(true) }),
  async handler({ agent_id, force }, ctx) {
    try {
      const posted = await ctx.team.update(callerHandle(ctx), terminateChildUpdate, [{ agent_id, force: force ?? false }]);
      ctx.wakeups.wake(ctx.caller.runId, agent_id);
      return posted;
    } catch (err) {
      if (!(err instanceof ToolError) || err.code !== 'not_member') throw err;
      const known = await ctx.team.query(ctx.team.run(ctx.caller.runId), peerQuery, { agent_id });
      if (known) throw new ToolError('not_leader', `You do not lead the team of "${agent_id}".`, { field: 'agent_id' });
      throw new ToolError('unknown_agent', `No agent "${agent_id}" in this task.`, { field: 'agent_id' });
    }
  },
});
