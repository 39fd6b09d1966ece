import { questionClaim, type DecisionProof } from '../../src/common/pure/decisionProof';
import { refuse } from '../errors';
import { requireProof } from '../proofCheck';
import { answerProblem, answerText, toAnswer, type Answer, type GivenAnswer } from './answers';
import * as m from './messages';

/**
 * One question's state and its rules. Methods named check* refuse a call
 * without changing anything (they run in Update validators); the others
 * apply what was accepted. A question is pending until it is answered,
 * declined, found unanswerable (no human gateway) or cancelled (withdrawn,
 * or its run ended); then it is over for good.
 */
export class QuestionState {
  status: m.QuestionStatus = 'pending';
  /** Every holder so far, first to last. */
  readonly chain: string[] = [];
  answers: Answer[] | null = null;
  answeredBy: m.QuestionView['answered_by'] = null;
  declined: m.QuestionView['declined'] = null;
  /** A person's answer to a root review as given, with the gateway's proof: handed on to the run, which checks it again. */
  answeredByPerson: { given: GivenAnswer[]; proof: DecisionProof } | null = null;
  runEnded = false;
  /** Told when the question is over (the workflow wakes the asker's waiting call). */
  onOver: () => void = () => undefined;

  constructor(
    readonly input: m.QuestionInput,
    readonly askedAt: number,
  ) {}

  get holder(): string | null {
    return this.status === 'pending' ? (this.chain.at(-1) ?? null) : null;
  }

  /** The holder after `current`: the next leader up the chain, or the human gateway past the root. */
  nextAfter(current: string): string {
    const at = this.input.ancestors.indexOf(current);
    return at >= 0 && at + 1 < this.input.ancestors.length ? this.input.ancestors[at + 1] : m.USER;
  }

  /** The caller holds the question, or is told why not: `overCode` (unknown_qid or stale) once it is over, not_holder otherwise. */
  checkHolder(by: m.Actor, overCode: 'unknown_qid' | 'stale'): void {
    const qid = this.input.qid;
    if (this.status !== 'pending') throw refuse(overCode, overCode === 'stale' ? `Question ${qid} is no longer pending.` : `No pending question ${qid}.`, { field: 'qid' });
    const mine = by.operator !== undefined ? this.holder === m.USER : by.agent_id === this.holder;
    if (mine) return;
    // A holder it was passed on from lost a race with its own escalation (or another hop's): the question moved on.
    if (overCode === 'stale' && by.agent_id !== undefined && this.chain.includes(by.agent_id)) {
      throw refuse('stale', `Question ${qid} was escalated past you; it is no longer yours to act on.`, { field: 'qid' });
    }
    throw refuse('not_holder', `You do not hold question ${qid}; only its current holder may act on it.`, { field: 'qid' });
  }

  checkAnswer(by: m.Actor, given: GivenAnswer[]): void {
    this.checkHolder(by, 'unknown_qid');
    const asked = this.input.questions;
    if (given.length !== asked.length) {
      throw refuse('answer_count_mismatch', `Question ${this.input.qid} has ${asked.length} sub-question(s); ${given.length} answer(s) given.`, { field: 'answers', expected: asked.length });
    }
    for (const [i, a] of given.entries()) {
      const problem = answerProblem(asked[i], a, i);
      if (problem) throw refuse('invalid_input', problem.message, { field: problem.field });
    }
  }

  /** A person's answer or refusal is the gateway's to vouch for; an agent's answer needs no proof. */
  checkProof(operator: string | undefined, d: { answers: GivenAnswer[] } | { decline: string }, proof: DecisionProof | undefined, askedAt?: number): void {
    if (operator === undefined) return;
    // The same question asked again after the person read it: an honest click on the older one, not a forgery.
    if (askedAt !== undefined && askedAt !== this.askedAt) throw refuse('stale', `Question ${this.input.qid} was asked again since you read it; answer the new one.`, { field: 'qid' });
    const claim = questionClaim(this.input.runId, { qid: this.input.qid, asked_at: this.askedAt }, operator, d, proof?.at ?? 0);
    requireProof(claim, proof, this.input.decisionKeys, { qid: this.input.qid });
  }

  checkDecline(operator: string): void {
    this.checkHolder({ operator }, 'unknown_qid');
    // The root waits on the verdict; declining would leave it waiting with nobody asked.
    const kind = this.input.system?.kind;
    if (kind === 'root_review' || kind === 'root_termination') throw refuse('invalid_input', 'A root review is answered Approve or Rework; it cannot be declined.', { field: 'reason' });
  }

  answer(by: m.Actor, given: GivenAnswer[], reason: string | null, proof?: DecisionProof): void {
    this.answers = given.map((a, i) => toAnswer(this.input.questions[i], a));
    const kind = this.input.system?.kind;
    if (by.operator !== undefined && proof && (kind === 'root_review' || kind === 'root_termination')) this.answeredByPerson = { given, proof };
    this.answeredBy = { ...by, reason };
    this.end('answered');
  }

  decline(operator: string, reason: string): void {
    this.declined = { operator, reason };
    this.end('declined');
  }

  /** The next holder takes it; at the top with no human gateway, nobody can answer it. */
  passTo(holder: string): void {
    this.chain.push(holder);
    if (holder === m.USER && !this.input.humanGateway) this.end('unavailable');
  }

  /** Withdrawn, or its run ended: a question still open is over. Returns whether it was open. */
  cancel(): boolean {
    if (this.status !== 'pending') return false;
    this.end('cancelled');
    return true;
  }

  private end(next: m.QuestionStatus): void {
    this.status = next;
    this.onOver();
  }

  view(): m.QuestionView {
    const input = this.input;
    return {
      qid: input.qid,
      run_id: input.runId,
      asker_id: input.askerId,
      asker_role: input.askerRole,
      status: this.status,
      holder: this.holder,
      chain: [...this.chain],
      questions: input.questions,
      context: input.context,
      system: input.system ?? null,
      ...(input.artifacts ? { artifacts: input.artifacts } : {}),
      asked_at: this.askedAt,
      answers: this.answers,
      answer_text: this.answers ? answerText(input.questions, this.answers) : null,
      answered_by: this.answeredBy,
      declined: this.declined,
    };
  }
}
