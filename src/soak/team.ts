import { AgentClient, retryAfterMs } from '../client/agent';
import type { Rng } from './rng';

/** Soak messages carry a unique text, so a delivery can be matched to its send whatever id the gateway gave it. */
const TAG = 'soak:';

/** One keyed iSphere send: the approval its dry run opened, whether the real send answered `sent`, and what it last answered otherwise. */
export interface SendRecord {
  approvalId: string | null;
  sent: boolean;
  messageRef: string | null;
  lastAnswer: string | null;
}

export interface Tally {
  /** Contents whose send_message answered with success. */
  acknowledged: Set<string>;
  /** How often each soak content reached an inbox. */
  delivered: Map<string, number>;
  calls: number;
  failedCalls: number;
  /** Time of the last successful tool call, for recovery figures. */
  lastSuccess: number;
  /** ask_user calls by their words: how often the asker got the right answer, and a wrong one. */
  questions: Map<string, { answered: number; wrong: number }>;
  /** Members' reviews signalled (their leader clears them with a message). */
  reviews: number;
  /** Keyed task_create calls by key: how many times each was answered with success (a re-issued call keeps its key). */
  taskKeys: Map<string, number>;
  /** Keyed iSphere sends by key: the approval their dry run opened, and whether the real send answered `sent`. */
  sends: Map<string, SendRecord>;
  /** send_message calls started (a keyed message's repeats not counted): the offered load. */
  offeredMessages: number;
  /**
   * Messages whose last answer said they were not delivered (a refusal code
   * other than outcome_unknown), by content, with that code. One that reached
   * an inbox anyway was answered untruly.
   */
  refused: Map<string, string>;
  /**
   * Keyed messages whose earlier attempts were all refused with a code
   * saying nothing was delivered, and whose repeat answered `reused`: the
   * first delivery happened, so a refusal was untrue. By content, with the codes.
   */
  reusedAfterRefusal: Map<string, string[]>;
  /** Every refusal send_message answered, by code (repeats included). */
  refusalCodes: Map<string, number>;
}

/** What the root answers a soak question with. */
function answerTo(words: string): string {
  return `answer to ${words}`;
}

export interface Member {
  agentId: string;
  client: AgentClient;
  /** The same agent on the task board (agentteam). */
  tasks: AgentClient;
  /** The same agent on iSphere (members only: the root meets the review gate). */
  isphere?: AgentClient;
  isRoot: boolean;
}

/** iSphere sends per soak: enough to meet the kills, few enough to keep the bridge's deliveries easy to count. */
const MAX_SENDS = 12;

/** The title a soak task gets: its key, so the board can be counted by key. */
export const soakTaskTitle = (key: string) => `Soak task ${key}`;

export function newTally(): Tally {
  return { acknowledged: new Set(), delivered: new Map(), calls: 0, failedCalls: 0, lastSuccess: 0, questions: new Map(), reviews: 0, taskKeys: new Map(), sends: new Map(), offeredMessages: 0, refused: new Map(), reusedAfterRefusal: new Map(), refusalCodes: new Map() };
}

/** What an answer to send_message says: delivered (and whether as a repeat), refused with a code, or nothing known. */
export type SendAnswer = { kind: 'delivered'; reused: boolean } | { kind: 'refused'; code: string; retryAfterMs?: number } | { kind: 'unknown' };

/** Answers that leave the outcome open: the call may be repeated with its key, and a delivery is not a lie. */
const UNKNOWN = new Set(['outcome_unknown']);
/** A call that got no answer at all (the gateway died under it). */
const NO_ANSWER = 'no answer';
/** Answers a runtime repeats a keyed call after: the change is certainly not made, or may be. */
const RETRIED = new Set(['unavailable', 'outcome_unknown', 'rate_limited']);
/**
 * Refusals made before the call reaches its tool (the gateway's buckets): they say this call did nothing, not that
 * its message is undelivered, so after an attempt whose outcome was unknown they are no untrue answer.
 */
const AT_THE_DOOR = new Set(['rate_limited']);

/**
 * One answer to one soak message's attempt, tallied; `refusals` holds the
 * message's earlier attempts' codes and gets this one's. What stands at the
 * end is checked against the inboxes (soak.ts, messagesReport).
 */
export function tallySend(tally: Tally, content: string, refusals: string[], answer: SendAnswer): void {
  const unknownBefore = refusals.some((c) => UNKNOWN.has(c) || c === NO_ANSWER);
  if (answer.kind === 'delivered') {
    tally.acknowledged.add(content);
    tally.refused.delete(content);
    // Every earlier attempt said nothing was delivered, yet this one found the first delivery.
    if (answer.reused && refusals.length > 0 && !unknownBefore) tally.reusedAfterRefusal.set(content, [...refusals]);
    return;
  }
  if (answer.kind === 'refused') {
    refusals.push(answer.code);
    tally.refusalCodes.set(answer.code, (tally.refusalCodes.get(answer.code) ?? 0) + 1);
    if (UNKNOWN.has(answer.code) || (AT_THE_DOOR.has(answer.code) && unknownBefore)) tally.refused.delete(content);
    else tally.refused.set(content, answer.code);
    return;
  }
  // A call that failed on the way (a gateway killed mid-call): nothing is known, so no refusal stands.
  refusals.push(NO_ANSWER);
  tally.refused.delete(content);
}

/**
 * A soak team: one root that declares plans and spawns members in waves,
 * members who message each other, ask for review and get answered, and a
 * reader per member that long-polls and acknowledges its inbox as a runtime
 * would. Calls that fail while the worker is down are counted, not retried.
 */
export class SoakTeam {
  readonly members: Member[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[] = [];
  private sent = 0;
  private wave = 0;
  /** Pause between one member's calls once traffic started; members who join later start at once. */
  private pause = 0;
  private sending = true;
  /** Steps in flight, so stopSending can wait for their acknowledgements. */
  private stepping = 0;
  /** Members waiting on an ask_user of theirs (one each at a time), and the waits themselves. */
  private readonly asking = new Set<string>();
  private readonly waits: Promise<void>[] = [];

  constructor(
    private readonly gatewayUrl: string,
    /** The run's board: its id. */
    private readonly board: string,
    private readonly rng: Rng,
    readonly tally: Tally,
    private readonly launch: (agentId: string) => Promise<string>,
  ) {}

  async addRoot(agentId: string, token: string): Promise<void> {
    await this.join(agentId, token, true);
  }

  /** Declares `count` more tasks and spawns an agent for each. */
  async spawnWave(count: number): Promise<void> {
    const root = this.members[0];
    const w = this.wave++;
    const tasks = Array.from({ length: count }, (_, i) => ({ id: `w${w}-t${i}`, role: `member-${w}-${i}`, skill: 'worker', task: 'Soak.' }));
    const plan = await this.asLeader(root, 'declare_plan', { tasks });
    if (!plan) return;
    for (const t of tasks) {
      const spawned = await this.asLeader(root, 'spawn_agent', { task_id: t.id });
      if (spawned) await this.join(spawned.agent_id as string, await this.launch(spawned.agent_id as string), false);
    }
  }

  /**
   * A leader's call that the review gate may refuse while members' reviews
   * wait: the leader answers them (a message clears a review) and tries
   * again, as a leader's runtime would.
   */
  private async asLeader(m: Member, name: string, args: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      this.tally.calls++;
      const out = await m.client.call(name, args).catch(() => undefined);
      if (out && !out.isError) {
        this.tally.lastSuccess = Date.now();
        return out.data as Record<string, unknown>;
      }
      this.tally.failedCalls++;
      if (out?.error?.code === 'review_gate_denied') await this.answerReviews(m);
      else if (out?.isError) return undefined;
      else await new Promise((r) => setTimeout(r, 250));
    }
    return undefined;
  }

  /**
   * The root reports for review once, for certain: its random steps may
   * not roll one before the kills (a CI run once had none, and nothing of
   * the root's review path was soaked). The person's loop approves it.
   */
  async rootReview(): Promise<boolean> {
    const root = this.members[0];
    for (let attempt = 0; attempt < 40; attempt++) {
      if (await this.call(root, 'signal_review', { detail: `[REVIEW REQUIRED] Root review ${this.sent++}.` })) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    return false;
  }

  /** The leader answers its pending reviews with a message, which clears each. */
  private async answerReviews(m: Member, most = Infinity): Promise<void> {
    const pending = await this.call(m, 'list_pending_reviews', {});
    for (const r of ((pending?.items as { agent_id: string }[] | undefined) ?? []).slice(0, most)) {
      await this.call(m, 'send_message', { to: r.agent_id, content: 'Looks good, carry on.' });
    }
  }

  /** Starts every member's traffic and reader loops; they run until stop(). */
  start(pauseMs: number): void {
    for (const m of this.members) this.startLoops(m, pauseMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.loops, ...this.waits]);
  }

  /** Ends the sending and keeps the readers going until every acknowledged send arrived, or the time is up. */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const undelivered = () => [...this.tally.acknowledged].some((c) => !this.tally.delivered.has(c));
    const creating = () => [...this.tally.taskKeys.values()].some((n) => n === 0);
    const sending = () => [...this.tally.sends.values()].some((s) => !s.sent);
    while (Date.now() < deadline && (undelivered() || this.asking.size > 0 || creating() || sending())) {
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async join(agentId: string, token: string, isRoot: boolean): Promise<void> {
    const [client, tasks, isphere] = await Promise.all([
      AgentClient.connect(this.gatewayUrl, token),
      AgentClient.connect(this.gatewayUrl, token, 'agentteam'),
      isRoot ? undefined : AgentClient.connect(this.gatewayUrl, token, 'isphere'),
    ]);
    const member = { agentId, client, tasks, isphere, isRoot };
    this.members.push(member);
    if (this.pause > 0) this.startLoops(member, this.pause);
  }

  private startLoops(m: Member, pauseMs: number): void {
    this.pause = pauseMs;
    this.loops.push(this.act(m, pauseMs), this.read(m));
  }

  /** Stops new sends and waits for those in flight, so every acknowledgement is counted before the drain. */
  async stopSending(): Promise<void> {
    this.sending = false;
    while (this.stepping > 0) await new Promise((r) => setTimeout(r, 50));
  }

  private async act(m: Member, pauseMs: number): Promise<void> {
    while (!this.stopped) {
      if (this.sending) {
        this.stepping++;
        await this.step(m).finally(() => this.stepping--);
      }
      await new Promise((r) => setTimeout(r, pauseMs * (0.5 + this.rng.next())));
    }
  }

  private async step(m: Member): Promise<void> {
    const roll = this.rng.next();
    if (!m.isRoot && roll < 0.06) {
      // Members only: the root's calls meet the review gate while members' reviews wait.
      this.createTask(m, `k${this.sent++}`);
    } else if (!m.isRoot && roll < 0.08 && this.tally.sends.size < MAX_SENDS) {
      this.sendIsphere(m, `s${this.sent++}`);
    } else if (roll < 0.7) {
      await this.message(m, this.rng.pick(this.members).agentId, undefined);
    } else if (roll < 0.8) {
      await this.call(m, 'list_peers', {});
    } else if (!m.isRoot && roll < 0.85 && !this.asking.has(m.agentId)) {
      this.ask(m, `Soak question ${this.sent++} from ${m.agentId}?`);
    } else if (m.isRoot && roll > 0.92) {
      // The root's own review goes to the person (the soak's operator loop approves it).
      await this.call(m, 'signal_review', { detail: `[REVIEW REQUIRED] Root review ${this.sent++}.` });
    } else if (!m.isRoot) {
      if (await this.call(m, 'signal_review', { detail: `[REVIEW REQUIRED] Review ${this.sent++} from ${m.agentId}.` })) this.tally.reviews++;
    } else {
      await this.answerReviews(m, 3);
    }
  }

  /**
   * ask_user in the background, as a runtime whose call failed would: the
   * same words again until an answer comes (the gateway attaches a re-issued
   * call to the question already asked). The root answers it.
   */
  private ask(m: Member, words: string): void {
    this.asking.add(m.agentId);
    this.tally.questions.set(words, { answered: 0, wrong: 0 });
    const question = { questions: [{ question: words, header: 'Soak', multiSelect: false, options: [] }] };
    this.waits.push(
      (async () => {
        try {
          while (!this.stopped) {
            const out = await this.call(m, 'ask_user', question);
            if (!out) {
              await new Promise((r) => setTimeout(r, 300));
              continue;
            }
            const got = this.tally.questions.get(words)!;
            if (out.answer_text === `Soak: ${answerTo(words)}`) got.answered++;
            else got.wrong++;
            return;
          }
        } finally {
          this.asking.delete(m.agentId);
        }
      })(),
    );
  }

  /**
   * A keyed task_create, re-issued with the same key until it answers, as
   * a runtime whose call failed (the worker was down) would: the board must
   * end with exactly one task per key.
   */
  private createTask(m: Member, key: string): void {
    this.tally.taskKeys.set(key, 0);
    this.waits.push(
      (async () => {
        while (!this.stopped) {
          const out = await this.call(m, 'task_create', { channel: this.board, tasks: [{ title: soakTaskTitle(key) }], idempotency_key: key }, m.tasks);
          if (out) {
            this.tally.taskKeys.set(key, this.tally.taskKeys.get(key)! + 1);
            return;
          }
          await new Promise((r) => setTimeout(r, 300));
        }
      })(),
    );
  }

  /**
   * A keyed iSphere send: a dry run (again until it answers) opens the
   * approval the soak's person grants; then the real send, again until it
   * answers `sent`, as a runtime whose call failed would. However often it
   * is repeated through the kills, the bridge must get it once.
   */
  private sendIsphere(m: Member, key: string): void {
    const record: SendRecord = { approvalId: null, sent: false, messageRef: null, lastAnswer: null };
    this.tally.sends.set(key, record);
    const args = { target_type: 'contact', target_id: 'c_0003', content_text: `Soak send ${key} from ${m.agentId}.`, idempotency_key: key };
    this.waits.push(
      (async () => {
        while (!this.stopped && record.approvalId === null) {
          const out = await this.call(m, 'isphere_send_message', args, m.isphere);
          if (out) record.approvalId = (out.approval as { approval_id: string }).approval_id;
          else await new Promise((r) => setTimeout(r, 300));
        }
        while (!this.stopped && !record.sent) {
          this.tally.calls++;
          const out = await m.isphere!.call('isphere_send_message', { ...args, dry_run: false, approval_id: record.approvalId }).catch((err: unknown) => {
            record.lastAnswer = `threw: ${String(err).slice(0, 300)}`;
            return undefined;
          });
          if (out && !out.isError && out.data.send_status === 'sent') {
            record.sent = true;
            record.messageRef = out.data.message_ref as string;
            return;
          }
          if (out) record.lastAnswer = JSON.stringify(out.isError ? (out.error ?? out.data) : out.data).slice(0, 300);
          // Still waiting for the person, or the worker is down: the same call again shortly.
          await new Promise((r) => setTimeout(r, 300));
        }
      })(),
    );
  }

  /** The root answers a question in its inbox, again until it is taken or is no longer its own. */
  private answer(m: Member, content: string): void {
    const qid = /\nqid: (q_[A-Za-z0-9_-]+)/.exec(content)?.[1];
    const words = /\n0\. \[Soak\] (.+) \(free text\)/.exec(content)?.[1];
    if (!qid || !words) return;
    this.waits.push(
      (async () => {
        while (!this.stopped) {
          this.tally.calls++;
          const out = await m.client.call('answer_question', { qid, answers: [{ selected_labels: [], text: answerTo(words) }], reason: 'The soak answers.' }).catch(() => undefined);
          if (out && (!out.isError || ['unknown_qid', 'not_holder', 'stale'].includes(out.error?.code ?? ''))) return;
          this.tally.failedCalls++;
          await new Promise((r) => setTimeout(r, 300));
        }
      })(),
    );
  }

  /**
   * Messages offered at `perSecond` across the team whatever the answers
   * (an open loop: a slow or dead worker does not slow the offer), half of
   * them with an idempotency key and repeated, as a runtime would, after an
   * answer that invites it. Runs until stopSending.
   */
  startOffering(perSecond: number): void {
    if (perSecond <= 0) return;
    this.loops.push(
      (async () => {
        while (!this.stopped && this.sending) {
          const from = this.rng.pick(this.members);
          const to = this.rng.pick(this.members).agentId;
          const keyed = this.rng.next() < 0.5;
          this.stepping++;
          void this.message(from, to, keyed ? `m${this.sent}` : undefined).finally(() => this.stepping--);
          await new Promise((r) => setTimeout(r, (1000 / perSecond) * (0.5 + this.rng.next())));
        }
      })(),
    );
  }

  /**
   * One soak message, its answer tallied: delivered, refused (with the code,
   * so the end can check the refusal was true), or unknown. With a key it is
   * repeated after `unavailable`, `outcome_unknown` or a failed call, until
   * it is delivered or the soak ends.
   */
  private async message(m: Member, to: string, key: string | undefined): Promise<void> {
    const content = `${TAG}${m.agentId}:${this.sent++}`;
    this.tally.offeredMessages++;
    const refusals: string[] = [];
    for (;;) {
      const answer = await this.sendOnce(m, { to, content, ...(key === undefined ? {} : { idempotency_key: key }) });
      tallySend(this.tally, content, refusals, answer);
      if (answer.kind === 'delivered') return;
      const again = key !== undefined && !this.stopped && (answer.kind === 'unknown' || RETRIED.has(answer.code));
      if (!again) return;
      // As a careful runtime repeats: after the pause asked for, else 250 ms doubling to 5 s, jittered. Repeats every
      // 250 ms from every waiting message kept a busy worker from ever catching up (a CI soak took 115 s to recover).
      const backoff = Math.min(5_000, 250 * 2 ** (refusals.length - 1)) * (0.5 + this.rng.next());
      const asked = answer.kind === 'refused' ? answer.retryAfterMs : undefined;
      await new Promise((r) => setTimeout(r, Math.max(asked ?? 0, backoff)));
    }
  }

  private async sendOnce(m: Member, args: Record<string, unknown>): Promise<SendAnswer> {
    this.tally.calls++;
    try {
      const out = await m.client.call('send_message', args);
      if (!out.isError) {
        this.tally.lastSuccess = Date.now();
        return { kind: 'delivered', reused: (out.data as { reused?: boolean } | undefined)?.reused === true };
      }
      this.tally.failedCalls++;
      if (!out.error?.code) return { kind: 'unknown' };
      const after = retryAfterMs(out.error);
      return { kind: 'refused', code: out.error.code, ...(after === undefined ? {} : { retryAfterMs: Math.min(after, 10_000) }) };
    } catch {
      this.tally.failedCalls++;
      return { kind: 'unknown' };
    }
  }

  private async read(m: Member): Promise<void> {
    let cursor = 0;
    // A read whose ack failed is read again: count each inbox item once, by its sequence number.
    let counted = 0;
    while (!this.stopped) {
      try {
        const view = await m.client.inbox(cursor, 1000);
        for (const item of view.messages as { content: string; seq: number }[]) {
          if (item.seq <= counted) continue;
          counted = item.seq;
          if (item.content.startsWith(TAG)) this.tally.delivered.set(item.content, (this.tally.delivered.get(item.content) ?? 0) + 1);
          if (m.isRoot && item.content.startsWith('[INBOX QUESTION]')) this.answer(m, item.content);
        }
        if (view.next_cursor > cursor) {
          await m.client.ack(view.next_cursor);
          cursor = view.next_cursor;
        }
      } catch {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /** One tool call; its structured result, or undefined when it failed. */
  private async call(m: Member, name: string, args: Record<string, unknown>, client = m.client): Promise<Record<string, unknown> | undefined> {
    this.tally.calls++;
    try {
      const out = await client.call(name, args);
      if (out.isError) {
        this.tally.failedCalls++;
        return undefined;
      }
      this.tally.lastSuccess = Date.now();
      return out.data as Record<string, unknown>;
    } catch {
      this.tally.failedCalls++;
      return undefined;
    }
  }

  /** How many tasks the board holds per soak key (every page, subtasks included). */
  async tasksByKey(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    let cursor: string | undefined;
    do {
      // A member reads: the root may be held by the review gate while members' reviews wait.
      // A read, so safe to repeat: a busy machine's `unavailable` here says nothing about the board (a CI run failed on one).
      const page = await this.members[1].tasks.persist('task_list', { channel: this.board, limit: 100, include_subtasks: true, sort: 'number_asc', ...(cursor ? { cursor } : {}) });
      for (const t of page.items as { title: string }[]) {
        const key = /^Soak task (k\d+)$/.exec(t.title)?.[1];
        if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      cursor = page.next_cursor;
    } while (cursor);
    return counts;
  }

  async close(): Promise<void> {
    await Promise.all(this.members.flatMap((m) => [m.client, m.tasks, m.isphere].map((c) => c?.close().catch(() => undefined))));
  }
}
