import { agentWorkflowId } from '../ids';
import { tell } from '../signals';
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
  if (s.status === 'terminated' || s.data.crashed_out) return;
  if (exit.pid !== undefined && exit.pid === s.data.last_exit_pid) return;
  if (exit.pid !== undefined) s.data.last_exit_pid = exit.pid;
  s.data.crashes += 1;
  s.events.emit('agent_crashed', { crashes: s.data.crashes, code: exit.code, signal: exit.signal, stderr_tail: exit.stderr_tail });
  if (s.data.crashes === 1) s.data.launch_wanted = 'resume';
  else if (s.data.crashes === 2) s.data.launch_wanted = 'fresh';
  else {
    s.data.crashed_out = true;
    s.complete({ stop_reason: 'crash_escalated' });
    if (s.isRoot) {
      s.events.emit('root_crash_escalation', { crashes: s.data.crashes });
      return;
    }
    const content = `[AGENT CRASHED] ${s.id.name} (${s.id.agentId}) crashed ${s.data.crashes} times and was not restarted. Decide whether to terminate it with force=true.`;
    await tell(agentWorkflowId(s.id.runId, s.id.leaderId!), m.childChangedSignal, {
      agent_id: s.id.agentId,
      patch: {},
      inbox: { kind: 'system', content, message_id: newId('msg') },
    });
  }
}
