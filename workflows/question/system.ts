import type { Text } from '../../src/common/pure/content';
import { restartSignal, systemMessageSignal } from '../agent/messages';
import { agentWorkflowId, runWorkflowId } from '../ids';
import { rootAnsweredSignal } from '../run/messages';
import { tell } from '../signals';
import type { DecisionProof } from '../../src/common/pure/decisionProof';
import type { Answer, GivenAnswer, SubQuestion } from './answers';
import type { SystemQuestion } from './messages';

/**
 * The questions Dipper asks a person itself, and where their answers go.
 * Root reviews are Approve / Rework (the notes); a watchdog escalation asks
 * the person for words to the agent it is about, who owns the next step.
 */

export interface SystemAsk {
  system: SystemQuestion;
  questions: SubQuestion[];
  context: Text | null;
  /** One line for the Temporal UI's summary. */
  summary: string;
}

const verdict = (what: string): SubQuestion => ({
  question: what,
  header: 'Verdict',
  multiSelect: false,
  no_other: true,
  options: [
    { label: 'Approve', description: 'Accept it.', value: 'approve' },
    { label: 'Rework', description: 'Send it back; say what to change.', value: 'rework', requires_text: true },
  ],
});

/** What a person's answer to a root review question decides: the verdict, and for rework the words to the root. */
export function rootVerdictOf(given: GivenAnswer): { verdict: 'approve' | 'rework'; text?: string } {
  const value = verdict('').options.find((o) => o.label === given.selected_labels[0])?.value;
  return value === 'approve' ? { verdict: 'approve' } : { verdict: 'rework', text: given.text ?? '' };
}

export function rootReviewAsk(kind: 'review' | 'termination', rootId: string, detail: Text): SystemAsk {
  return kind === 'review'
    ? {
        system: { kind: 'root_review', agent_id: rootId },
        questions: [verdict('The root agent reports its work done and asks you to review it (its report is the context). Approve, or send it back for rework?')],
        context: detail,
        summary: 'The root agent asks for a review',
      }
    : {
        system: { kind: 'root_termination', agent_id: rootId },
        questions: [verdict('The root agent asks to end the run (its words are the context). Approve ends the run; Rework sends it back to work.')],
        context: detail,
        summary: 'The root agent asks to end the run',
      };
}

const wordsTo = (who: string): SubQuestion => ({
  question: `What should ${who} be told? Your words go to its inbox.`,
  header: 'Message',
  multiSelect: false,
  options: [],
});

export function overdueReviewAsk(leader: { id: string; name: string }, child: { id: string; name: string }, waitedSeconds: number): SystemAsk {
  return {
    system: { kind: 'review_overdue', agent_id: leader.id, child_id: child.id },
    questions: [wordsTo(`the leader ${leader.name}`)],
    context: `${child.name} (${child.id}) has waited ${waitedSeconds} s for ${leader.name} (${leader.id}) to review its work; the leader was reminded twice and did not act.`,
    summary: `A review left pending by ${leader.name}`,
  };
}

export function idleAgentAsk(agent: { id: string; name: string }, idleSeconds: number): SystemAsk {
  return {
    system: { kind: 'agent_idle', agent_id: agent.id },
    questions: [wordsTo(agent.name)],
    context: `${agent.name} (${agent.id}) has made no tool call for ${idleSeconds} s and was nudged twice.`,
    summary: `${agent.name} is idle`,
  };
}

/** The root crashed out or spent a budget: nobody but the person leads it. */
export function rootStoppedAsk(root: { id: string; name: string }, what: string, context: string): SystemAsk {
  return {
    system: { kind: 'root_stopped', agent_id: root.id },
    questions: [
      {
        question: `The root agent ${root.name} ${what}. Answer to start it again, fresh, with your words as its next message; decline to leave it stopped (cancel the run to end it).`,
        header: 'Restart',
        multiSelect: false,
        options: [],
      },
    ],
    context,
    summary: `The root agent ${root.name} is stopped`,
  };
}

/** Hands a system question's outcome on: to the run for the root's verdicts, as words in an inbox otherwise. */
export async function deliverSystemAnswer(
  runId: string,
  qid: string,
  system: SystemQuestion,
  outcome: {
    answers: Answer[] | null;
    operator: string | null;
    declined: string | null;
    /** The person's answer as given, with the gateway's proof and when the question was asked: the run checks it again. */
    byPerson: { given: GivenAnswer[]; proof: DecisionProof; asked_at: number } | null;
  },
): Promise<void> {
  if (system.kind === 'root_review' || system.kind === 'root_termination') {
    if (!outcome.byPerson || !outcome.operator) return;
    await tell(runWorkflowId(runId), rootAnsweredSignal, {
      qid,
      kind: system.kind === 'root_review' ? 'review' : 'termination',
      operator: outcome.operator,
      ...outcome.byPerson,
    });
    return;
  }
  if (system.kind === 'root_stopped') {
    // Declined: the root stays stopped, and the run open for the person to end.
    if (outcome.declined !== null || !outcome.answers) return;
    await tell(agentWorkflowId(runId, system.agent_id), restartSignal, {
      message_id: `${qid}-answer`,
      content: `[FROM USER] (you were stopped and are started again, question ${qid}) ${outcome.answers[0]?.text ?? ''}`,
    });
    return;
  }
  const words = outcome.declined !== null ? `The user declined to answer (${outcome.declined}).` : (outcome.answers?.[0]?.text ?? '');
  const about = system.kind === 'review_overdue' ? `about the review ${system.child_id} is waiting for` : 'about your idle time';
  await tell(agentWorkflowId(runId, system.agent_id), systemMessageSignal, {
    message_id: `${qid}-answer`,
    content: `[FROM USER] (${about}, question ${qid}) ${words}`,
  });
}
