import { answerProblem, type GivenAnswer, type SubQuestion } from '../../workflows/question/answers';

const free: SubQuestion = { question: 'Why?', header: '', multiSelect: false, options: [] };
const options = [
  { label: 'Plain', description: '' },
  { label: 'Wordy', description: '', requires_text: true },
  { label: 'Other', description: '' },
];
const single: SubQuestion = { question: 'Which?', header: '', multiSelect: false, options };
const multi: SubQuestion = { question: 'Which ones?', header: '', multiSelect: true, options };
/** As Dipper's own questions (root reviews) come: one of the options, no "Other". */
const closed: SubQuestion = { ...single, no_other: true };

const labelSets = [[], ['Plain'], ['Wordy'], ['Other'], ['Plain', 'Wordy'], ['Plain', 'Other'], ['Plain', 'Plain'], ['Missing'], ['Wordy', 'Missing']];
const texts = [null, '', '   ', 'typed'];

/**
 * Every pairing of a question shape, chosen labels and text, with the
 * field the question workflow's own rule names (null: taken). The console
 * must reach the same verdict on each.
 */
export function answerRuleCases(): { q: SubQuestion; a: GivenAnswer; field: string | null }[] {
  const cases = [];
  for (const q of [free, single, multi, closed]) {
    for (const selected_labels of labelSets) {
      for (const text of texts) {
        const a = { selected_labels, text };
        cases.push({ q, a, field: answerProblem(q, a, 0)?.field ?? null });
      }
    }
  }
  return cases;
}
