import { el, longText } from './dom.js';

/** The radio value of the typed "Other" answer; options are named by their index, so no label can collide with it. */
const OTHER = 'other';

/**
 * One sub-question as the spec draws it: its header as a chip, then radio
 * buttons (single-select, plus "Other" with text unless `no_other`),
 * checkboxes (multi-select) or a text box (free text). An option with
 * `requires_text` reveals the text box when chosen. `read()` gives the
 * answer as the API takes it: `{ selected_labels, text }`.
 */
export function subQuestion(key, q, at) {
  const kind = q.options.length === 0 ? 'text' : q.multiSelect ? 'multi' : 'single';
  const name = `${key}-${at}`;
  const legend = el('legend', {}, q.header ? el('span', { class: 'chip', text: q.header }) : null, longText('span', { class: 'question-text' }, q.question));
  const choices = q.options.map((option, i) =>
    choice(kind === 'multi' ? 'checkbox' : 'radio', name, String(i), option.label, option.description, option.requires_text === true),
  );
  if (kind === 'single' && q.no_other !== true) {
    // A model may have called one of its own options "Other"; ours must still read as the typed answer.
    const own = q.options.some((o) => o.label === 'Other') ? 'Something else' : 'Other';
    choices.push(choice('radio', name, OTHER, own, 'None of these: type your own answer.', false));
  }
  const textLabel = el('label', { for: `${name}-text` });
  const text = el('textarea', { id: `${name}-text`, name: `${name}-text`, rows: 2, maxlength: 65536, class: 'answer-text' });
  const textRow = el('div', { class: 'text-row' }, textLabel, text);
  const hint = el('p', { class: 'hint', 'aria-live': 'polite' });
  const node = el('fieldset', { class: 'sub-question', 'data-kind': kind, 'data-index': at }, legend, choices.map((c) => c.row), textRow, hint);

  const picked = () => choices.filter((c) => c.input.checked);
  /** Which text the answer needs now, or null for none; its label says what the text is for. */
  const textFor = () => {
    if (kind === 'text') return 'Your answer';
    const asking = picked().filter((c) => c.input.value === OTHER || c.asksText);
    if (asking.length === 0) return null;
    return asking[0].input.value === OTHER ? 'Your answer (Other)' : `Tell more (${asking.map((c) => c.label).join(', ')})`;
  };
  const sync = () => {
    const label = textFor();
    textRow.hidden = label === null;
    textLabel.textContent = label ?? '';
  };
  node.addEventListener('change', sync);
  sync();

  return {
    node,
    read: () => ({
      selected_labels: picked().filter((c) => c.input.value !== OTHER).map((c) => c.label),
      text: textFor() === null ? null : text.value,
    }),
    show(problem) {
      hint.textContent = problem ? problem.message : '';
      node.classList.toggle('invalid', problem !== null);
    },
  };
}

function choice(type, name, value, label, description, asksText) {
  const id = `${name}-${value}`;
  const input = el('input', { type, name, value, id });
  const row = el(
    'div',
    { class: 'choice' },
    input,
    el('label', { for: id }, el('span', { class: 'option-label', text: label }), description ? el('span', { class: 'option-description', text: description }) : null),
  );
  return { input, row, label, asksText };
}
