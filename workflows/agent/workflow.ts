import { onHost } from '../host';
import { spillBeforeContinuing } from './spill';
import type { Text } from '../../src/common/pure/content';
import {
  allHandlersFinished,
  condition,
  setCurrentDetails,
  continueAsNew,
  proxyActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { historyFull, readyToContinue } from '../events';
import { attentionKey, statusKey } from '../searchAttributes';
import type { AgentStatus, Limits } from '../types';
import type { AgentIdentity, LaunchSpec } from '../../src/common/launchPayload';
import { agentWorkflowId } from '../ids';
import { failureText } from '../errors';
import { tell } from '../signals';
import { runtimeGone } from './crash';
import { leaderEndedSignal } from './messages';
import { installHandlers } from './handlers';
import { Leader } from './leader';
import { notifyStatus } from './reports';
import { AgentState, freshData, type AgentData } from './state';
import { attentionOf, healthOf } from './health';
import { watchWorkspaces } from './workspaceWatch';
import { DUE_NOW, nextDue, runWatchdog, touch } from './watchdog';

export interface AgentInput {
  identity: AgentIdentity;
  limits: Limits;
  /** The originating user task of the run; create_team members receive it as their first message. */
  runTask: Text;
  /** What the runtime is started with; ignored once data is carried over. */
  launch: LaunchSpec;
  /** State carried through continue-as-new. */
  data?: AgentData;
  reported?: AgentStatus;
}

const runtimeOptions = { startToCloseTimeout: '60s', retry: { maximumAttempts: 3, initialInterval: '500ms' } } as const;
/** Retried until the registry has it: a revocation is never given up. */
const tokens = proxyActivities<Activities>({ startToCloseTimeout: '15s', retry: { initialInterval: '500ms', maximumInterval: '10s' } });
/** Regular activities: a webhook that hangs does not hold the workflow task, and with it every call to this agent. */
const runtimeActivities = proxyActivities<Activities>(runtimeOptions);

/**
 * Waits until no handler or build runs and every event is written. Writing
 * takes an activity, during which a new Update may be accepted: so check again.
 */
async function settle(s: AgentState, lead: Leader): Promise<void> {
  const idle = () => allHandlersFinished() && !lead.busy;
  do {
    await condition(idle);
    await s.events.drain();
  } while (!idle());
}

/** Tells every child still running that its leader ended; each does the same for its own. */
async function endSubtree(s: AgentState): Promise<void> {
  const running = Object.values(s.data.children).filter((c) => c.status !== 'terminated');
  await Promise.all(running.map((c) => tell(agentWorkflowId(s.id.runId, c.agent_id), leaderEndedSignal)));
}

/**
 * One agent's lifecycle: its inbox, its review state, and everything it
 * leads. Tool calls arrive as Updates and Queries (see handlers.ts); this
 * loop does the slow work handlers must not wait for: starting and
 * stopping the runtime, flushing events, reporting status, continue-as-new.
 */
export async function agentWorkflow(input: AgentInput): Promise<void> {
  // Its receipts come first, before any handler is set: an Update an earlier run applied is not applied again.
  const s = new AgentState(input.identity, input.limits, input.data ?? freshData(input.launch));
  let reported: AgentStatus = input.reported ?? 'active';
  let runtimeStopped = s.status === 'terminated';
  // Watchdog passes A and B (workflows/agent/watchdog.ts).
  s.onActivity = () => touch(s);
  const lead = new Leader(s, input.runTask);
  installHandlers(s, lead);
  void lead.buildForever();
  void s.events.flushForever(true);
  void watchWorkspaces(s);
  // A pinned run's processes are started and stopped by its host's workers (workflows/host.ts).
  const runtime = onHost(s.id.host, runtimeActivities, runtimeOptions);

  for (;;) {
    await runWatchdog(s);
    const grace = s.graceRemaining();
    // The next watchdog strike: a durable timer. Woken early only when a strike comes due sooner (not for every sign of life).
    const due = nextDue(s);
    const sooner = () => {
      const next = nextDue(s);
      return next !== null && (due === null || next < due);
    };
    const wake = () =>
      // Evaluated after every activation: the Temporal UI's current details follow each change (they make no command).
      showDetails(s) ||
      s.status !== reported ||
      (s.data.launch_wanted !== null && !runtimeStopped) ||
      (s.status === 'terminated' && !runtimeStopped) ||
      (s.data.halted?.down === false && !runtimeStopped) ||
      attentionOf(s) !== (s.data.attention ?? 'none') ||
      s.data.run_ended ||
      historyFull(input) ||
      sooner();
    const watchIn = due === null ? null : due === DUE_NOW ? 1 : Math.max(1, due - Date.now());
    const timeout = grace === null ? watchIn : watchIn === null ? grace : Math.min(grace, watchIn);
    if (timeout === null) await condition(wake);
    // Pass C backstop: an unconsumed terminate sentinel forces the runtime down after the grace period.
    else if (!(await condition(wake, timeout)) && grace !== null && s.graceRemaining() === 0) s.consumeTerminate('watchdog_grace');

    if (s.status === 'terminated' && !runtimeStopped) {
      runtimeStopped = true;
      // A poll waiting on this inbox answers with the new status.
      s.events.wakeInbox();
      // Its subtree ends with it, all levels at once (a run that ended tells every agent itself).
      if (!s.data.run_ended && !s.data.subtree_told) {
        s.data.subtree_told = true;
        await endSubtree(s);
      }
      // A terminated agent's tokens die first, whatever generation: stopping its process can take seconds (SIGTERM,
      // then a wait), and a pinned run's stop waits for its host's worker however long the host is away.
      await tokens.revokeTokens({ runId: s.id.runId, agentId: s.id.agentId, at: Date.now() });
      try {
        await runtime.stopRuntime({ runId: s.id.runId, agentId: s.id.agentId, skill: s.id.skill });
      } catch (err) {
        // A runtime that cannot be stopped is recorded, never a reason to lose the agent's workflow.
        s.events.emit('agent_error', { stage: 'stop', message: failureText(err) });
      }
    }
    const halted = s.data.halted;
    if (halted && !halted.down && !runtimeStopped) {
      // Stopped by Dipper (a spent budget): its tokens die, then its process; a restart launches a newer generation.
      await tokens.revokeTokens({ runId: s.id.runId, agentId: s.id.agentId, belowGen: (s.data.launch_gen ?? 0) + 1, at: Date.now() });
      try {
        await runtime.stopRuntime({ runId: s.id.runId, agentId: s.id.agentId, skill: s.id.skill });
      } catch (err) {
        s.events.emit('agent_error', { stage: 'stop', message: failureText(err) });
      }
      halted.down = true;
    }
    const mode = s.data.launch_wanted;
    if (mode && !runtimeStopped) {
      s.data.launch_wanted = null;
      const generation = (s.data.launch_gen ?? 0) + 1;
      s.data.launch_gen = generation;
      s.data.launched_at = Date.now();
      // The process before this one (crashed, or never heard from) loses its token before the next one gets a new one.
      if (generation > 1) {
        await tokens.revokeTokens({ runId: s.id.runId, agentId: s.id.agentId, belowGen: generation, at: Date.now() });
      }
      try {
        const started = await runtime.launchRuntime({ identity: s.id, launch: s.data.launch_spec, mode, generation, issuedAt: s.data.launched_at });
        s.events.emit('agent_started', { runtime: started.kind, mode });
        // Nothing runs a `none` agent until a client acts as it: the watchdog waits for that client's first word.
        if (started.kind === 'none' && s.data.driven !== true) s.data.driven = false;
      } catch (err) {
        // A launch that fails counts as a crash: the same ladder of resume, fresh start, escalation.
        s.events.emit('agent_error', { stage: 'launch', mode, message: failureText(err) });
        await runtimeGone(s, { code: null, signal: null, stderr_tail: [] });
      }
    }
    const attention = attentionOf(s);
    if (attention !== (s.data.attention ?? 'none')) {
      // Only a change is written: agents that never need anyone never carry it.
      upsertSearchAttributes([{ key: attentionKey, value: attention }]);
      if (attention === 'none') delete s.data.attention;
      else s.data.attention = attention;
    }
    if (s.status !== reported) {
      reported = s.status;
      upsertSearchAttributes([{ key: statusKey, value: reported }]);
      await notifyStatus(s);
    }

    // Ended: its tokens and process are gone, its leader and the run's directory have its status. The workflow closes
    // with it, so Temporal shows it ended; later words to it find it closed (send_message answers recipient_terminated).
    if (s.status === 'terminated' && runtimeStopped && reported === 'terminated') {
      showDetails(s);
      await settle(s, lead);
      return;
    }
    if (historyFull(input)) {
      // Texts first (it waits on an activity, during which calls may come in), then the handlers' end; unwritten events travel in data.
      await spillBeforeContinuing(s);
      const ready = readyToContinue(s.events);
      await condition(() => ready() && !lead.busy);
      // A wake not yet written goes with it: a poll waiting on this inbox still hears of the last change.
      const wakes = s.events.takeWakes();
      const data = wakes ? { ...s.data, wakes } : s.data;
      await continueAsNew<typeof agentWorkflow>({ ...input, data, reported });
    }
  }
}

/** What a person sees as this agent's current details in the Temporal UI: its health's line. Always false. */
function showDetails(s: AgentState): false {
  setCurrentDetails(healthOf(s).line);
  return false;
}
