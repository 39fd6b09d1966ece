import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Answer, GivenAnswer, SubQuestion } from './answers';

/** The human gateway's place in a chain: past the root, the user. */
export const USER = 'user';

export type QuestionStatus = 'pending' | 'answered' | 'declined' | 'unavailable' | 'cancelled';

export interface QuestionInput {
  runId: string;
  qid: string;
  askerId: string;
  askerRole: string;
  /** The asker's leader, its leader, ... up to the root; empty when the root asks. */
  ancestors: string[];
  questions: SubQuestion[];
  context: string | null;
  /** Straight to the human gateway (watchdog escalations, root reviews), not up the chain. */
  toUser?: boolean;
  /** Whether a human gateway takes questions (DIPPER_HUMAN_GATEWAY); a question that reaches the top without one ends `unavailable`. */
  humanGateway: boolean;
  /** How long an answered question stays open, so an identical ask_user re-issued by its asker gets the same answer. */
  reattachMs: number;
}

/** Who acted: an agent of the run, or a named operator at the human gateway. */
export interface Actor {
  agent_id?: string;
  operator?: string;
}

export interface QuestionView {
  qid: string;
  run_id: string;
  asker_id: string;
  asker_role: string;
  status: QuestionStatus;
  /** Who holds it now: an agent id, or "user" at the human gateway (null once it is over). */
  holder: string | null;
  /** Every holder so far, first to last. */
  chain: string[];
  questions: SubQuestion[];
  context: string | null;
  asked_at: number;
  answers: Answer[] | null;
  answer_text: string | null;
  answered_by: (Actor & { reason: string | null }) | null;
  declined: { operator: string; reason: string } | null;
}

export const answerQuestionUpdate = defineUpdate<{ ok: true; qid: string }, [{ by: Actor; answers: GivenAnswer[]; reason: string | null }]>('answerQuestion');
export const escalateQuestionUpdate = defineUpdate<{ ok: true; qid: string; new_holder: string | null }, [{ by: Actor; reason: string }]>('escalateQuestion');
export const declineQuestionUpdate = defineUpdate<{ ok: true; qid: string }, [{ operator: string; reason: string }]>('declineQuestion');
/** The run ended: a question still open is over. */
export const questionRunEndedSignal = defineSignal('questionRunEnded');
export const questionQuery = defineQuery<QuestionView, []>('question');
