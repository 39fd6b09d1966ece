import type { ApplicationFailure } from '@temporalio/common';
import { proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { refuse } from '../errors';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { tell } from '../signals';
import { peerChangedSignal, rootReportSignal } from '../run/messages';
import type { ChildChange } from './messages';
import * as m from './messages';
import * as leader from './leader';
import { buildTasks, readyIds } from './plan';
import { launchMember, newTeam } from './spawn';
import { newId, type AgentState } from './state';

const local = proxyLocalActivities<Activities>({ startToCloseTimeout: '15s', retry: { maximumAttempts: 5 } });

/** Tells the leader's mirror and the run's directory about a status change. */
export async function notifyStatus(s: AgentState): Promise<void> {
  const status = s.status;
  await tell(runWorkflowId(s.id.runId), peerChangedSignal, { agent_id: s.id.agentId, patch: { status } });
  if (!s.isRoot) await tellLeader(s, { patch: { status } });
}

async function tellLeader(s: AgentState, change: Omit<ChildChange, 'agent_id'>): Promise<void> {
  await tell(agentWorkflowId(s.id.runId, s.id.leaderId!), m.childChangedSignal, { agent_id: s.id.agentId, ...change });
}

export function installHandlers(s: AgentState, runTask: string): void {
  // Messaging and the runtime's inbox

  setHandler(
    m.deliverMessagesUpdate,
    async ({ messages }) => {
      let cleared = false;
      const outcomes = messages.map((msg): m.DeliveryOutcome => {
        try {
          s.checkDeliver(msg);
        } catch (err) {
          const failure = err as ApplicationFailure;
          const extra = (failure.details?.[0] ?? {}) as Record<string, unknown>;
          return { message_id: msg.message_id, delivered: false, code: failure.type ?? 'internal', message: failure.message, extra };
        }
        cleared = s.deliver(msg) || cleared;
        return { message_id: msg.message_id, delivered: true };
      });
      if (cleared && !s.isRoot) {
        // Awaited so the leader's own list_pending_reviews sees the cleared review once send_message returns.
        await tellLeader(s, { patch: { review_pending: false, review_pending_ts: null, termination_requested: false } });
      }
      return outcomes;
    },
    {
      validator: ({ messages }) => {
        if (messages.length === 0 || messages.length > m.MAX_DELIVERY_BATCH) {
          throw refuse('invalid_input', `A delivery carries 1 to ${m.MAX_DELIVERY_BATCH} messages.`, { field: 'messages' });
        }
      },
    },
  );

  setHandler(m.ackInboxUpdate, ({ up_to }) => ({ acked_through: s.ack(up_to) }), {
    validator: ({ up_to }) => {
      if (!Number.isInteger(up_to) || up_to < 0) throw refuse('invalid_input', 'up_to must be a sequence number.', { field: 'up_to' });
    },
  });

  setHandler(m.inboxQuery, ({ after, limit }) => ({
    items: s.inbox.after(after, limit),
    acked_through: s.data.inbox.acked_through,
    status: s.status,
  }));

  setHandler(m.launchQuery, () => ({ identity: s.id, launch: s.data.launch_spec }));

  setHandler(m.systemMessageSignal, ({ message_id, content }) => {
    if (s.inbox.has(message_id)) return;
    s.inbox.push('system', null, content, message_id, Date.now());
  });

  // Reviews and termination, the child's side

  setHandler(
    m.signalReviewUpdate,
    async ({ detail }) => {
      s.signalReview(detail);
      if (s.isRoot) {
        await tell(runWorkflowId(s.id.runId), rootReportSignal, {
          kind: 'review',
          detail,
          ts: Date.now(),
        });
      } else {
        await tellLeader(s, {
          patch: { review_pending: true, review_pending_ts: s.data.review.ts, summary: detail, status: s.status },
          inbox: { kind: 'review_report', content: detail, message_id: newId('msg') },
        });
      }
      return { recorded: true as const, review_pending: true as const };
    },
    { validator: ({ detail }) => s.checkSignalReview(detail) },
  );

  setHandler(
    m.requestTerminationUpdate,
    async ({ detail }: { detail?: string }) => {
      s.requestTermination(detail);
      const text = detail ?? '(no detail given)';
      if (s.isRoot) {
        await tell(runWorkflowId(s.id.runId), rootReportSignal, {
          kind: 'termination',
          detail: text,
          ts: Date.now(),
        });
      } else {
        await tellLeader(s, {
          patch: { termination_requested: true, summary: s.data.last_status_detail, status: s.status },
          inbox: { kind: 'termination_request', content: `[TERMINATION REQUESTED] ${text}`, message_id: newId('msg') },
        });
      }
      return { recorded: true as const, termination_requested: true as const };
    },
    { validator: (_input: { detail?: string }) => s.checkRequestTermination() },
  );

  setHandler(m.terminateSignal, ({ force }) => {
    s.postTerminate(force);
  });

  // Crash policy: resume the same session, then start fresh, then escalate.
  setHandler(m.runtimeExitedSignal, async (exit) => {
    if (s.status === 'terminated' || s.data.crashed_out) return;
    s.data.crashes += 1;
    s.events.emit('agent_crashed', { crashes: s.data.crashes, code: exit.code, signal: exit.signal, stderr_tail: exit.stderr_tail });
    if (s.data.crashes === 1) s.data.launch_wanted = 'resume';
    else if (s.data.crashes === 2) s.data.launch_wanted = 'fresh';
    else {
      s.data.crashed_out = true;
      s.events.emit('agent_completed', { stop_reason: 'crash_escalated' });
      if (s.isRoot) s.events.emit('root_crash_escalation', { crashes: s.data.crashes });
      else {
        const content = `[AGENT CRASHED] ${s.id.name} (${s.id.agentId}) crashed ${s.data.crashes} times and was not restarted. Decide whether to terminate it with force=true.`;
        await tellLeader(s, { patch: {}, inbox: { kind: 'system', content, message_id: newId('msg') } });
      }
    }
  });

  setHandler(m.runEndedSignal, () => {
    if (s.status !== 'terminated') {
      // Every agent's lifecycle ends with one agent_completed; here the run ended around it.
      s.events.emit('agent_completed', { stop_reason: s.data.termination_requested ? 'end_turn' : 'cancelled', run_ended: true });
    }
    s.data.run_ended = true;
  });

  setHandler(m.humanAnsweredSignal, () => {
    s.clearByLeader(null);
  });

  installLeaderHandlers(s, runTask);
}

function installLeaderHandlers(s: AgentState, runTask: string): void {
  setHandler(m.childChangedSignal, (change) => {
    const child = s.data.children[change.agent_id];
    if (!child) return;
    Object.assign(child, change.patch);
    if (change.inbox && !s.inbox.has(change.inbox.message_id)) {
      s.inbox.push(change.inbox.kind, change.agent_id, change.inbox.content, change.inbox.message_id, Date.now());
    }
  });

  setHandler(
    m.declarePlanUpdate,
    async ({ tasks }) => {
      s.planBusy = true;
      try {
        const planId = newId('pl');
        const built = buildTasks(tasks);
        // The file is written first; only then does the plan become active.
        const planPath = await local.writePlanFile({ runId: s.id.runId, agentId: s.id.agentId, planId, tasks: built });
        s.data.plan = { plan_id: planId, plan_path: planPath, tasks: built };
        s.events.emit('plan_declared', { plan_id: planId, plan_path: planPath, tasks: built.length, ready: readyIds(built) });
        return {
          plan_id: planId,
          plan_path: planPath,
          tasks: built.map((t) => ({ id: t.id, role: t.role, skill: t.skill, depends_on: t.depends_on, status: t.status })),
        };
      } finally {
        s.planBusy = false;
      }
    },
    { validator: ({ tasks }) => leader.checkDeclarePlan(s, tasks) },
  );

  setHandler(
    m.removePlanUpdate,
    async () => {
      const plan = s.data.plan!;
      s.planBusy = true;
      try {
        const removedPath = await local.retirePlanFile({ planPath: plan.plan_path });
        s.data.plan = null;
        s.events.emit('plan_removed', { plan_id: plan.plan_id, plan_path: removedPath });
        return { removed_plan_id: plan.plan_id };
      } finally {
        s.planBusy = false;
      }
    },
    { validator: () => leader.checkRemovePlan(s) },
  );

  setHandler(m.listReadyQuery, () => (s.data.plan ? { ready: readyIds(s.data.plan.tasks) } : null));

  setHandler(
    m.spawnAgentUpdate,
    async ({ task_id }) => {
      const task = leader.checkSpawn(s, task_id);
      // Marked before the first await so a concurrent remove_plan sees the task in flight.
      s.spawnBusy = true;
      task.status = 'in_flight';
      let started = false;
      try {
        if (!(await local.skillExists({ skill: task.skill }))) {
          throw refuse('unknown_skill', `Skill "${task.skill}" could not be loaded.`, { field: 'task_id', skill: task.skill });
        }
        const teamCreated = s.data.spawn_team_id === null;
        const team = teamCreated
          ? await newTeam(s, `${s.id.name}-team`, [])
          : s.data.teams.find((t) => t.team_id === s.data.spawn_team_id)!;
        s.data.spawn_team_id = team.team_id;
        const spec = { role: task.role, skill: task.skill, model: task.model, description: task.description, rules: [] };
        const agentId = await launchMember(s, team, { ...spec, planTaskId: task.id, task: task.task }, runTask);
        started = true;
        task.agent_id = agentId;
        s.events.emit('task_spawned', { plan_id: s.data.plan!.plan_id, task_id, agent_id: agentId });
        return {
          agent_id: agentId,
          team_id: team.team_id,
          task_id,
          remaining_ready: leader.remainingReady(s),
          team_created: teamCreated,
        };
      } finally {
        if (!started) task.status = 'ready';
        s.spawnBusy = false;
      }
    },
    { validator: ({ task_id }) => void leader.checkSpawn(s, task_id) },
  );

  setHandler(
    m.createTeamUpdate,
    async (input) => {
      s.createTeamBusy = true;
      try {
        for (const r of input.roles) {
          if (!(await local.skillExists({ skill: r.skill }))) {
            throw refuse('unknown_skill', `Skill "${r.skill}" could not be loaded.`, { field: 'roles', skill: r.skill });
          }
        }
        const team = await newTeam(s, input.name, input.rules ?? [], input.task);
        // Members start side by side; ids are drawn in role order, so replay stays deterministic.
        const ids = await Promise.all(
          input.roles.map((r) => launchMember(s, team, { ...r, rules: input.rules ?? [], task: runTask }, runTask)),
        );
        return { team_id: team.team_id, members: ids.map((agent_id, i) => ({ agent_id, role: input.roles[i].role })) };
      } finally {
        s.createTeamBusy = false;
      }
    },
    { validator: (input) => leader.checkCreateTeam(s, input) },
  );

  setHandler(
    m.terminateChildUpdate,
    async ({ agent_id, force }) => {
      const child = s.data.children[agent_id];
      child.terminate_posted = true;
      if (force) s.events.emit('terminate.forced', { reason: 'leader_force', target: agent_id });
      else s.events.emit('completion.approved', { target: agent_id });
      leader.settleChildTask(s, agent_id, force);
      await tell(agentWorkflowId(s.id.runId, agent_id), m.terminateSignal, { force });
      return { sentinel_posted: true };
    },
    { validator: ({ agent_id, force }) => leader.checkTerminateChild(s, agent_id, force) },
  );

  setHandler(
    m.updatePlanTaskUpdate,
    (input) => ({ task_id: input.task_id, status: input.status, newly_ready: leader.updatePlanTask(s, input) }),
    { validator: (input) => void leader.checkUpdatePlanTask(s, input) },
  );

  setHandler(m.pendingReviewsQuery, ({ now }) => leader.pendingReviews(s, now));
}
