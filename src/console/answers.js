/**
 * The answer rules of workflows/question/answers.ts (answerProblem), kept
 * in step here so Submit is enabled exactly when the question workflow
 * will take the answer. The console's end-to-end test runs both over the
 * same cases. Fields are named as the server names them; the messages are
 * for the person at the form.
 */
export function answerProblem(q, a, at) {
  const field = (name) => `answers[${at}].${name}`;
  const text = typeof a.text === 'string' ? a.text.trim() : '';
  const labels = a.selected_labels;
  if (new Set(labels).size !== labels.length) return { field: field('selected_labels'), message: 'An option is chosen twice.' };
  const chosen = [];
  for (const label of labels) {
    const option = q.options.find((o) => o.label === label);
    if (!option) return { field: field('selected_labels'), message: `"${label}" is not one of the options.` };
    chosen.push(option);
  }
  if (q.options.length === 0) {
    if (labels.length > 0) return { field: field('selected_labels'), message: 'This question takes a typed answer only.' };
    if (!text) return { field: field('text'), message: 'Type an answer.' };
    return null;
  }
  if (!q.multiSelect && labels.length > 1) return { field: field('selected_labels'), message: 'Choose one option.' };
  if (labels.length === 0) {
    if (q.multiSelect) return { field: field('selected_labels'), message: 'Choose at least one option.' };
    if (q.no_other) return { field: field('selected_labels'), message: 'Choose one of the options.' };
    if (!text) return { field: field('text'), message: 'Choose an option, or type another answer.' };
    return null;
  }
  const needsText = chosen.some((o) => o.requires_text === true);
  if (needsText && !text) return { field: field('text'), message: 'The option you chose asks for text too.' };
  if (!needsText && text) return { field: field('text'), message: 'Text goes only with an option that asks for it, or with Other.' };
  return null;
}
