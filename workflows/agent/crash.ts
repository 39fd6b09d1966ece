import { agentWorkflowId, runWorkflowId } from '../ids';
import { rootStoppedAsk } from '../question/system';
import { systemQuestionSignal } from '../run/messages';
import { tell } from '../signals';
import { tellPeople } from '../notify';
import type { Text } from '../../src/common/pure/content';
import type { BudgetSpent } from '../../src/common/budgets';
import * as m from './messages';
import { newId, type AgentState } from './state';

/**
 * Crash policy from the reference notes: the first time a live agent's
 * runtime is gone it is resumed, the second time started fresh, the third
 * time it is left down and its leader (for the root, the human) is told.
 */
export async function runtimeGone(
  s: AgentState,
  exit: { code: number | null; signal: string | null; stderr_tail: string[]; pid?: number },
) {
  if (s.status === 'terminated' || s.data.crashed_out || s.data.halted) return;
  if (exit.pid !== undefined && exit.pid === s.data.last_exit_pid) return;
  if (exit.pid !== undefined) s.data.last_exit_pid = exit.pid;
  s.data.crashes += 1;
  s.events.emit('agent_crashed', { crashes: s.data.crashes, code: exit.code, signal: exit.signal, stderr_tail: exit.stderr_tail });
  if (s.data.crashes === 1) s.data.launch_wanted = 'resume';
  else if (s.data.crashes === 2) s.data.launch_wanted = 'fresh';
  else {
    s.data.crashed_out = true;
    s.data.stopped_at = Date.now();
    s.complete({ stop_reason: 'crash_escalated' });
    if (s.isRoot) s.events.emit('root_crash_escalation', { crashes: s.data.crashes });
    const tail = exit.stderr_tail.slice(-20).join('\n');
    await escalate(s, `crashed ${s.data.crashes} times and was not restarted`, tail ? `Its last lines on stderr:\n${tail}` : 'It wrote nothing on stderr.', '[AGENT CRASHED]');
  }
}

/**
 * The model proxy found the agent, or its run, over budget. The agent is
 * stopped (its process and its token: the main loop does that) and left
 * for its leader to end, as a crashed-out agent is.
 */
export async function budgetSpent(s: AgentState, spent: BudgetSpent): Promise<void> {
  if (s.status === 'terminated' || s.data.crashed_out || s.data.halted) return;
  s.data.halted = { reason: 'budget', down: false };
  s.data.stopped_at = Date.now();
  s.events.emit('agent_budget_exceeded', { ...spent });
  s.complete({ stop_reason: 'budget_exceeded' });
  const whose = spent.budget === 'run' ? "the run's" : "its skill's";
  const what = `spent ${whose} ${spent.measure === 'tokens' ? 'token' : 'turn'} budget (${spent.used} used of ${spent.limit}) and was stopped`;
  const advice =
    spent.budget === 'run'
      ? "Every agent of the run is stopped at its next model request; raise the run's budget (DIPPER_MODEL_BUDGETS) to go on."
      : "Started again, it is stopped at its first model request unless its skill's budget is raised (DIPPER_MODEL_BUDGETS).";
  await escalate(s, what, advice, '[AGENT STOPPED]');
}

/**
 * A stopped agent no longer runs: its leader hears it, and decides whether
 * to end it. The root's leader is the person: a question in their inbox,
 * whose answer starts the root again (restart below).
 */
async function escalate(s: AgentState, what: string, context: string, tag: string): Promise<void> {
  if (s.isRoot) {
    const ask = rootStoppedAsk({ id: s.id.agentId, name: s.id.name }, what, context);
    // One question per launch that stopped: a root restarted and stopped again is asked again.
    await tell(runWorkflowId(s.id.runId), systemQuestionSignal, { ...ask, key: `root-stopped-${s.id.agentId}-${s.data.launch_gen ?? 0}` });
    return;
  }
  const content = `${tag} ${s.id.name} (${s.id.agentId}) ${what}. Decide whether to terminate it with force=true.`;
  // Its leader decides; people hear of it too, as of anything that stopped.
  tellPeople({ id: `${s.id.runId}/${s.id.agentId}/stopped-${s.data.launch_gen ?? 0}`, kind: 'stopped', run_id: s.id.runId, title: `${s.id.name} ${what}`, text: `${context}\nIts leader ${s.id.leaderId} was told.`, path: `/runs/${s.id.runId}` }, s.events);
  await tell(agentWorkflowId(s.id.runId, s.id.leaderId!), m.childChangedSignal, {
    agent_id: s.id.agentId,
    patch: {},
    inbox: { kind: 'system', content, message_id: newId('msg') },
  });
}

/** A person's answer to the question about a stopped root: a fresh start, the crash count from zero, their words next in its inbox. */
export function restart(s: AgentState, words: { message_id: string; content: Text }): void {
  if (s.status === 'terminated' || s.inbox.has(words.message_id)) return;
  if (!s.data.crashed_out && !s.data.halted?.down) return;
  s.data.crashed_out = false;
  s.data.crashes = 0;
  delete s.data.halted;
  delete s.data.stopped_at;
  // A new lifecycle: its end is recorded again.
  s.data.completed = false;
  s.data.launch_wanted = 'fresh';
  s.inbox.push('system', null, words.content, words.message_id, Date.now());
  s.events.emit('agent_restarted', { by: 'person' });
}
