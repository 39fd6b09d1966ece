import { api } from './api.js';
import { el, when } from './dom.js';

const PAGE = 1000;
const KEEP = 50;
const QUESTIONS = 20;

/**
 * The end of a run's event log. The API reads forward from a cursor, so
 * the first pull walks to the end once and later pulls fetch only what is
 * new; only the last events, and the last question ids, are kept.
 */
export class EventTail {
  constructor(runPath) {
    this.runPath = runPath;
    this.after = 0;
    this.kept = [];
    this.asked = [];
  }

  async pull() {
    for (;;) {
      const page = await api(`${this.runPath}/events?after=${this.after}&limit=${PAGE}`);
      for (const e of page.events) {
        if (e.type === 'question_asked' && typeof e.data?.qid === 'string') this.asked.push(e.data.qid);
      }
      this.kept = this.kept.concat(page.events).slice(-KEEP);
      this.asked = [...new Set(this.asked)].slice(-QUESTIONS);
      this.after = page.next_after;
      if (page.events.length < PAGE) return;
    }
  }

  /** Newest first. */
  qids() {
    return [...this.asked].reverse();
  }

  table() {
    if (this.kept.length === 0) return el('p', { class: 'empty', text: 'No events yet.' });
    const rows = [...this.kept].reverse().map((e) =>
      el(
        'tr',
        {},
        el('td', { text: when(e.ts) }),
        el('td', { class: 'mono', text: e.type }),
        el('td', { class: 'mono', text: e.agent_id ?? '' }),
        el('td', { class: 'data', text: shorten(JSON.stringify(e.data)) }),
      ),
    );
    return el('table', { class: 'events' }, el('thead', {}, el('tr', {}, ['When', 'Event', 'Agent', 'Data'].map((h) => el('th', { text: h })))), el('tbody', {}, rows));
  }
}

function shorten(text) {
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}
