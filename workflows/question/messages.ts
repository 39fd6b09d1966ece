import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { Text } from '../../src/common/pure/content';
import type { DecisionProof } from '../../src/common/pure/decisionProof';
import type { Artifact } from '../../activities/artifacts';
import type { Answer, GivenAnswer, SubQuestion } from './answers';

/** The human gateway's place in a chain: past the root, the user. */
export const USER = 'user';

export type QuestionStatus = 'pending' | 'answered' | 'declined' | 'unavailable' | 'cancelled';

/**
 * A question Dipper asks the human itself (the notes: root reviews and
 * watchdog escalations). Nobody waits on an ask_user call for it: the
 * question workflow hands the answer on (questions/system.ts).
 */
export interface SystemQuestion {
  kind: 'root_review' | 'root_termination' | 'review_overdue' | 'agent_idle' | 'root_stopped';
  /** The agent it is about: the root (reviews, or stopped), the leader who left a review pending, or the idle agent. */
  agent_id: string;
  /** For review_overdue: the child waiting for the review. */
  child_id?: string;
}

export interface QuestionInput {
  runId: string;
  qid: string;
  askerId: string;
  askerRole: string;
  /** The asker's leader, its leader, ... up to the root; empty when the root asks. */
  ancestors: string[];
  questions: SubQuestion[];
  /** Shared background; a system question's may be a long report kept in the content store. */
  context: Text | null;
  /** Straight to the human gateway (watchdog escalations, root reviews), not up the chain. */
  toUser?: boolean;
  system?: SystemQuestion;
  /** Whether a human gateway takes questions (DIPPER_HUMAN_GATEWAY); a question that reaches the top without one ends `unavailable`. */
  humanGateway: boolean;
  /** How long an answered question stays open, so an identical ask_user re-issued by its asker gets the same answer. */
  reattachMs: number;
  /** The gateway's public keys: a person's answer or refusal is taken only with a signature by one of them (src/common/pure/decisionProof.ts). */
  decisionKeys: string[];
  /** For a root's report: the files it names and its plan's artifacts, as they were when it reported. */
  artifacts?: Artifact[];
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
  context: Text | null;
  /** Set for the questions Dipper asks the human itself. */
  system: SystemQuestion | null;
  /** For a root's report: the files it names and its plan's artifacts, read when it reported. */
  artifacts?: Artifact[];
  asked_at: number;
  answers: Answer[] | null;
  answer_text: string | null;
  answered_by: (Actor & { reason: string | null }) | null;
  declined: { operator: string; reason: string } | null;
}

/** An operator's answer carries the gateway's proof (questionClaim); an agent's is the gateway's word for its token's holder. */
export interface AnswerInput {
  by: Actor;
  answers: GivenAnswer[];
  reason: string | null;
  proof?: DecisionProof;
  /** When the question the person answered was asked (the gateway read it before signing). */
  asked_at?: number;
}
/**
 * What a question's answer or refusal ends it with, handed by the gateway that took it to the asker's ask_user
 * waiting in the same process (no Query behind the question's next workflow task). `asking` is the question's first
 * run id: a later asking of the same words is another. Absent from older workers.
 */
export type QuestionOver = Pick<QuestionView, 'qid' | 'status' | 'answers' | 'answer_text' | 'declined'> & { asking: string };

export const answerQuestionUpdate = defineUpdate<{ ok: true; qid: string; over?: QuestionOver }, [AnswerInput]>('answerQuestion');
export const escalateQuestionUpdate = defineUpdate<{ ok: true; qid: string; new_holder: string | null }, [{ by: Actor; reason: string }]>('escalateQuestion');
export const declineQuestionUpdate = defineUpdate<{ ok: true; qid: string; over?: QuestionOver }, [{ operator: string; reason: string; proof?: DecisionProof; asked_at?: number }]>('declineQuestion');
/** The run ended: a question still open is over. */
export const questionRunEndedSignal = defineSignal('questionRunEnded');
/** What a system question asked was settled another way (a root decision through the operator API, a newer report): it is over. */
export const questionWithdrawnSignal = defineSignal<[{ reason: string }]>('questionWithdrawn');
export const questionQuery = defineQuery<QuestionView, []>('question');
