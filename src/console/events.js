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
      // Written in batches per workflow, so the log's order is not quite the order things happened in: shown by time.
      this.kept = this.kept.concat(page.events).sort(byTime).slice(-KEEP);
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
        el('td', { class: 'data', title: shorten(JSON.stringify(e.data)), text: shorten(describeEvent(e)) }),
      ),
    );
    return el('table', { class: 'events' }, el('thead', {}, el('tr', {}, ['When', 'Event', 'Agent', 'What'].map((h) => el('th', { text: h })))), el('tbody', {}, rows));
  }
}

export function byTime(a, b) {
  return a.ts - b.ts || a.seq - b.seq;
}

const code = (d) => (d.signal ? `signal ${d.signal}` : `exit code ${d.code}`);
const who = (id) => (id === 'user' ? 'a person' : id);

/** An event in words, for the kinds a person reads most; the rest as their data (the whole of it is the row's tooltip). */
const WORDS = {
  agent_started: (d) => `started ${d.mode === 'resume' ? 'again on its session' : d.mode === 'fresh' ? 'fresh' : ''} (${d.runtime} runtime)`.replace('  ', ' '),
  agent_crashed: (d) => `crash ${d.crashes}: ${code(d)}${d.stderr_tail?.length ? `; last stderr line: ${d.stderr_tail[d.stderr_tail.length - 1]}` : ''}`,
  agent_completed: (d) => `stopped: ${String(d.stop_reason ?? '').replace(/_/g, ' ')}`,
  root_crash_escalation: (d) => `crashed ${d.crashes} times: not restarted; a person is asked`,
  agent_budget_exceeded: (d) => `${d.budget} ${d.measure} budget spent (${d.used} of ${d.limit})`,
  agent_restarted: () => 'started again by a person',
  question_asked: (d) => `asked ${d.qid}${d.to_user ? ' of a person' : ''}`,
  question_routed: (d) => `${d.qid} now held by ${who(d.holder)}`,
  question_answered: (d) => `${d.qid} answered`,
  system_question_asked: (d) => `Dipper asked ${d.qid} (${String(d.kind).replace(/_/g, ' ')}) about ${d.about}`,
  'completion.reping': (d) => `reminded to review ${d.child_id} (reminder ${d.strike}, waited ${d.waited_s} s)`,
  'completion.approved': (d) => `${d.kind ?? 'review'} approved${d.operator ? ` by ${d.operator}` : ''}`,
  'completion.rework': (d) => `${d.kind ?? 'review'} sent back for rework${d.operator ? ` by ${d.operator}` : ''}`,
  'liveness.nudge': (d) => `nudged: no tool call for ${d.idle_s} s (reminder ${d.strike})`,
  'liveness.escalated_to_user': (d) => `no tool call for ${d.idle_s} s through the reminders: a person is asked`,
  'review.escalated_to_user': (d) => `${d.child_id} waited ${d.waited_s} s for its review through the reminders: a person is asked`,
  'completion.reported': () => 'handed in its work for review',
  task_ready: (d) => `plan task ${d.task_id} is ready`,
  'notification.sent': (d) => `people told (${String(d.kind).replace(/_/g, ' ')}) by ${d.sinks.join(', ')}`,
  'notification.failed': (d) => `could not tell people (${String(d.kind).replace(/_/g, ' ')})`,
};

export function describeEvent(e) {
  const words = WORDS[e.type];
  if (words) {
    try {
      return words(e.data ?? {});
    } catch {
      // An older event of another shape: its data, as before.
    }
  }
  return JSON.stringify(e.data);
}

function shorten(text) {
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}
