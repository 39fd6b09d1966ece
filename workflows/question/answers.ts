import type { GivenAnswer } from '../../src/common/pure/decisionProof';

/**
 * The ask_user question and its answer, as the team surface spec writes
 * them: pure functions the gateway (input checks) and the question
 * workflow (answer checks, rendering) share.
 */

export interface QuestionOption {
  label: string;
  description: string;
  /** A machine discriminator mirrored into selected_values; the label when absent. */
  value?: string;
  /** Selecting this option asks for typed text too. */
  requires_text?: boolean;
}

export interface SubQuestion {
  question: string;
  /** At most 12 characters; may be empty. */
  header: string;
  multiSelect: boolean;
  /** None (free text) or 2 to 4 choices. */
  options: QuestionOption[];
  /** Dipper's own questions (root reviews): one of the options, no typed "Other" answer. Never set by ask_user. */
  no_other?: boolean;
}

/** What a person or a leader gives for one sub-question; defined with the decision proof that binds it. */
export type { GivenAnswer };

/** One sub-question's answer as the asker receives it. */
export interface Answer {
  selected_labels: string[];
  selected_values: string[];
  text: string | null;
}

export interface AnswerProblem {
  field: string;
  message: string;
}

/**
 * Why a given answer does not fit its question, naming the field, or null.
 * Decisions where the spec is open (docs/decisions.md, "Questions"): a
 * single-select question also takes a typed "Other" answer (no label, text
 * given); a multi-select one takes one or more labels and text only beside
 * an option that requires it; a free-text question needs non-empty text.
 */
export function answerProblem(q: SubQuestion, a: GivenAnswer, at: number): AnswerProblem | null {
  const field = (name: string) => `answers[${at}].${name}`;
  const text = typeof a.text === 'string' ? a.text.trim() : '';
  const labels = a.selected_labels;
  if (new Set(labels).size !== labels.length) return { field: field('selected_labels'), message: 'A label is selected twice.' };
  const chosen: QuestionOption[] = [];
  for (const label of labels) {
    const option = q.options.find((o) => o.label === label);
    if (!option) return { field: field('selected_labels'), message: `"${label}" is not an option of question ${at}.` };
    chosen.push(option);
  }
  if (q.options.length === 0) {
    if (labels.length > 0) return { field: field('selected_labels'), message: `Question ${at} is free text: it has no options to select.` };
    if (!text) return { field: field('text'), message: `Question ${at} is free text: give the answer in text.` };
    return null;
  }
  if (!q.multiSelect && labels.length > 1) return { field: field('selected_labels'), message: `Question ${at} takes one option.` };
  if (labels.length === 0) {
    if (q.multiSelect) return { field: field('selected_labels'), message: `Select at least one option of question ${at}.` };
    if (q.no_other) return { field: field('selected_labels'), message: `Select one of the options of question ${at}.` };
    if (!text) return { field: field('text'), message: `Select an option of question ${at}, or give another answer in text.` };
    return null;
  }
  const needsText = chosen.some((o) => o.requires_text === true);
  if (needsText && !text) return { field: field('text'), message: `The option selected for question ${at} asks for text.` };
  if (!needsText && text) return { field: field('text'), message: `Question ${at}: text goes with an option that asks for it, or with no option ("Other").` };
  return null;
}

/** The answer as the asker receives it: values derived from the options, empty text as null. */
export function toAnswer(q: SubQuestion, a: GivenAnswer): Answer {
  const text = typeof a.text === 'string' && a.text.trim() ? a.text : null;
  const selected_values = a.selected_labels.map((label) => {
    const option = q.options.find((o) => o.label === label);
    return option?.value ?? label;
  });
  return { selected_labels: [...a.selected_labels], selected_values, text };
}

/**
 * answer_text, by the spec's rules: free text is the text; single-select the
 * chosen label (the text for "Other"); multi-select the labels joined by
 * commas. A chosen option's required text follows its label. One line per
 * sub-question, prefixed with its header when it has one.
 */
export function answerText(questions: SubQuestion[], answers: Answer[]): string {
  return answers
    .map((a, i) => {
      const q = questions[i];
      let line: string;
      if (q.options.length === 0 || a.selected_labels.length === 0) line = a.text ?? '';
      else {
        line = a.selected_labels.join(', ');
        if (a.text) line += `: ${a.text}`;
      }
      return q.header ? `${q.header}: ${line}` : line;
    })
    .join('\n');
}

/** The system message a holder finds in its inbox. */
export function inboxQuestion(input: { qid: string; askerId: string; askerRole: string; questions: SubQuestion[]; context: string | null; via: string[] }): string {
  const lines = [
    '[INBOX QUESTION]',
    `qid: ${input.qid}`,
    `from: ${input.askerRole} (${input.askerId})${input.via.length > 0 ? `, escalated by ${input.via.join(' -> ')}` : ''}`,
  ];
  if (input.context) lines.push(`context: ${input.context}`);
  input.questions.forEach((q, i) => {
    lines.push(`${i}. ${q.header ? `[${q.header}] ` : ''}${q.question}${q.multiSelect ? ' (choose one or more)' : q.options.length > 0 ? ' (choose one)' : ' (free text)'}`);
    for (const o of q.options) lines.push(`   - ${o.label}${o.description ? `: ${o.description}` : ''}${o.requires_text ? ' (asks for text)' : ''}`);
  });
  lines.push(
    '[/INBOX QUESTION]',
    'Answer it with answer_question (qid, one answer per question in order, reason) if you can; otherwise pass it up with escalate_question (qid, reason).',
  );
  return lines.join('\n');
}
