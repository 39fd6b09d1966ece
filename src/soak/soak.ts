import { Temporal } from '../temporal';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { Operator } from '../client/operator';
import { diagnose, repair } from '../ops/doctor';
import { replayMs } from '../ops/replayCost';
import { replayAll, replayersForMachine, type ReplayReport, HISTORY_CHANNEL_ARGS } from '../ops/replayAll';
import { installQuietRuntime } from '../ops/quietRuntime';
import { Rng } from './rng';
import { ANCHOR_EVENT, verifyChain } from '../common/stores/audit';
import { SqliteAuditStore } from '../common/stores/audit/sqliteStore';
import { SqliteEventStore } from '../common/stores/eventStore';
import { derivedAuditKey } from '../auth/secrets';
import { sign } from '../common/isphere/signature';
import { paths } from '../paths';
import { startSoakStack, type SoakStack } from './stack';
import { newTally, SoakTeam, type Tally } from './team';
import { killCost, killCostLine } from './killCost';
import { agentWorkflowId, approvalWorkflowId, runWorkflowId } from '../../workflows/ids';

export interface SoakOptions {
  seed: number;
  kills: number;
  /** Members spawned at the start; a second wave of half as many joins mid-soak. */
  agents: number;
  /** Seconds of traffic before the first kill, so histories have grown. */
  warmupSeconds: number;
  /** Seconds between kills, drawn from this range. */
  killEverySeconds: [number, number];
  /** Longest a dead worker stays down before its replacement starts. */
  maxDownSeconds: number;
  /** Pause between one member's tool calls (jittered). */
  pauseMs: number;
  /** send_message calls offered per second on top of the members' own, whatever the answers (half keyed and repeated). */
  offerPerSecond?: number;
  dataRoot: string;
  basePort: number;
  /** Extra environment for the worker and gateway (shorter sticky timeouts in CI, for instance). */
  env?: Record<string, string>;
  /** Extra environment for the gateway alone (the reproduction lets its Queries outlive the sticky timeout). */
  gatewayEnv?: Record<string, string>;
  /** A workflow bundle of today's code already built (a test run's), instead of building one. */
  bundlePath?: string;
  /** Repair what the first replay finds (dipper doctor's reset), then drain and check again. */
  repair?: boolean;
  /**
   * The crash matrix: of the `kills`, this many kill the gateway and the Temporal server instead of the worker
   * (in a seeded order). Absent: every kill is the worker's.
   */
  matrix?: { gateway: number; temporal: number };
  progress?: (line: string) => void;
}

export interface SoakReport {
  seed: number;
  kills: number;
  /** Seconds from each kill to the first successful tool call after it. */
  /** Per kill: from the moment the process was started again to the first tool call answered after the kill. */
  recoverySeconds: number[];
  /** Per kill: from the kill to that answer (the time left down included). */
  outageSeconds: number[];
  /** What each kill killed, in order (beside recoverySeconds). */
  killed: Victim[];
  agents: number;
  calls: number;
  failedCalls: number;
  acknowledgedSends: number;
  lost: number;
  duplicated: number;
  messages: MessagesReport;
  /** One warm replay of the longest history, on one thread, in ms. */
  largestReplayMs: number;
  /** Agents that did not answer a read at the end. */
  unanswered: string[];
  /**
   * ask_user through the kills: calls asked, answered rightly once, and
   * question workflows made for them (one per question: a re-issued call
   * attaches); the root's reviews the operator approved.
   */
  questions: { asked: number; answered: number; wrong: number; unanswered: number; workflows: number; rootReviews: number };
  /** Members' reviews signalled and cleared by their leader along the way. */
  reviews: number;
  /**
   * Keyed task_create calls through the kills, each re-issued with its key
   * until answered: keys, keys answered, keys on the board, keys with more
   * than one task, answered keys with none.
   */
  tasks: { keyed: number; answered: number; onBoard: number; duplicates: number; missing: number };
  /**
   * Keyed iSphere sends through the kills, each approved by the soak's
   * person (through the operator API and the webhook in turn) and repeated
   * until it answered `sent`: sends, answered, delivered by the bridge, more
   * than once, answered but never delivered; approvals with an intent and
   * an outcome record; whether the audit chain verifies.
   */
  sends: { keyed: number; answered: number; delivered: number; duplicates: number; missing: number; auditPairs: number; chainOk: boolean; viaWebhook: number };
  replay: ReplayReport;
  /** Nondeterministic histories the first replay found, before any repair. */
  brokenBeforeRepair: number;
  repaired: number;
  passed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type Victim = 'worker' | 'gateway' | 'temporal';

/** The processes the soak kills, in a seeded order: the matrix's gateway and server kills among the worker's. */
export function victims(o: Pick<SoakOptions, 'kills' | 'matrix'>, rng: Rng): Victim[] {
  const others: Victim[] = [...Array<Victim>(o.matrix?.gateway ?? 0).fill('gateway'), ...Array<Victim>(o.matrix?.temporal ?? 0).fill('temporal')];
  const all: Victim[] = [...Array<Victim>(Math.max(0, o.kills - others.length)).fill('worker'), ...others];
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [all[i], all[j]] = [all[j], all[i]];
  }
  return all;
}

/** One crash: SIGKILL, down for `downMs`, then the same process started again. */
/** Kills the victim, leaves it down for downMs, starts it again; resolves with the moment the new process was started. */
async function kill(stack: SoakStack, victim: Victim, downMs: number): Promise<number> {
  if (victim === 'worker') await stack.killWorker();
  else if (victim === 'gateway') await stack.killGateway();
  else await stack.killTemporal();
  await sleep(downMs);
  const restartedAt = Date.now();
  if (victim === 'worker') stack.startWorker();
  else if (victim === 'gateway') await stack.startGateway();
  else await stack.startTemporal();
  return restartedAt;
}

/**
 * A read the agent's workflow answered. The review gate's refusal counts: a
 * leader with members' reviews pending is refused list_peers, and only its
 * workflow, running, can say so.
 */
function answered(out: { isError: boolean; error?: { code?: string } }): boolean {
  return !out.isError || out.error?.code === 'review_gate_denied';
}

/**
 * The crash soak: a team works (messages, inbox reads and acks, plans,
 * spawns, reviews) while the worker is SIGKILLed at seeded random moments.
 * Then every history in the namespace is replayed with the current code,
 * and the invariants are checked: nothing nondeterministic or stuck, every
 * acknowledged send delivered exactly once, every agent answers.
 */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const say = o.progress ?? (() => undefined);
  const rng = new Rng(o.seed);
  const began = Date.now();
  installQuietRuntime();
  const stack = await startSoakStack({
    dataRoot: o.dataRoot,
    basePort: o.basePort,
    env: o.env,
    gatewayEnv: o.gatewayEnv,
    bundlePath: o.bundlePath,
    temporalOnFile: (o.matrix?.temporal ?? 0) > 0,
  });
  const operator = new Operator({ gatewayUrl: stack.gatewayUrl, operatorToken: stack.operatorToken });
  const tally = newTally();
  let team: SoakTeam | undefined;
  let stopApproving = false;
  try {
    const run = await operator.startRun(`Crash soak, seed ${o.seed}.`);
    team = new SoakTeam(stack.gatewayUrl, run.run_id, rng, tally, async (agentId) => (await operator.launch(run.run_id, agentId)).token as string);
    await team.addRoot(run.root.agent_id, run.root.agent_token);
    await team.spawnWave(o.agents);
    say(`seed ${o.seed}: ${team.members.length} agents working (stack and team up in ${((Date.now() - began) / 1000).toFixed(1)} s)`);
    team.start(o.pauseMs);
    team.startOffering(o.offerPerSecond ?? 0);
    const trafficFrom = Date.now();
    // A person at the console: the root's reviews come to them as questions, and they approve each.
    let rootReviews = 0;
    let approvedCount = 0;
    let viaWebhook = 0;
    const approving = (async () => {
      while (!stopApproving) {
        const waiting = await operator.request('GET', `/questions?run=${run.run_id}`).catch(() => undefined);
        for (const q of (waiting?.json?.questions ?? []) as { qid: string; system: { kind: string } | null }[]) {
          if (q.system?.kind !== 'root_review') continue;
          const res = await operator.request('POST', `/runs/${run.run_id}/questions/${q.qid}/answer`, { answers: [{ selected_labels: ['Approve'], text: null }] }).catch(() => undefined);
          if (res?.status === 200) rootReviews++;
        }
        // The members' iSphere sends: approved in the console's API and by the approval system's webhook, in turn.
        const pending = await operator.request('GET', `/isphere/approvals?run=${run.run_id}&status=pending`).catch(() => undefined);
        for (const a of (pending?.json?.approvals ?? []) as { approval_id: string }[]) {
          const byHook = approvedCount++ % 2 === 1;
          const ok = byHook ? await approveByWebhook(stack, run.run_id, a.approval_id) : (await operator.request('POST', `/runs/${run.run_id}/isphere/approvals/${a.approval_id}/approve`, {}).catch(() => undefined))?.status === 200;
          if (ok && byHook) viaWebhook++;
        }
        await sleep(500);
      }
    })();
    await sleep(o.warmupSeconds * 1000);
    // Before the kills: the root's review, on its way to the person while workers die.
    await team.rootReview();

    const recoverySeconds: number[] = [];
    const outageSeconds: number[] = [];
    // A client of its own each time: the matrix kills the Temporal server too, and a kill's account is best effort.
    const killCostOf = async (ids: string[], killedAt: number, answeredAt: number): Promise<string> => {
      const client = await Temporal.connect({ address: stack.temporalAddress, namespace: stack.namespace, channelArgs: HISTORY_CHANNEL_ARGS });
      try {
        return killCostLine(await killCost(client, ids, killedAt, answeredAt));
      } catch {
        return '';
      } finally {
        await client.close();
      }
    };
    // A generator of their own: which process dies when is the seed's alone, whatever the traffic drew before.
    const killed = victims(o, new Rng(o.seed ^ 0x5eed));
    for (let k = 0; k < killed.length; k++) {
      if (k === Math.floor(killed.length / 2)) await team.spawnWave(Math.max(1, Math.floor(o.agents / 2)));
      const killedAt = Date.now();
      const restartedAt = await kill(stack, killed[k], rng.next() * o.maxDownSeconds * 1000);
      // A probe read started after the kill: an answer already on its way when the process died does not count.
      const probe = team.members[0].client;
      // What each refused probe heard, and when after the restart it ended: where a slow recovery's time went.
      const refused: string[] = [];
      const heard = (what: string) => refused.push(`${what} at ${((Date.now() - restartedAt) / 1000).toFixed(1)} s`);
      let callStarted = Date.now();
      for (;;) {
        callStarted = Date.now();
        const out = await probe.call('list_peers', {}).catch(() => undefined);
        if (out && answered(out)) break;
        heard(out?.error?.code ?? 'no answer');
        await sleep(50);
      }
      recoverySeconds.push((Date.now() - restartedAt) / 1000);
      outageSeconds.push((Date.now() - killedAt) / 1000);
      const answeredAt = Date.now();
      const refusals = refused.length ? `; the probe was refused ${refused.length}×: ${refused.slice(0, 4).join(', ')}${refused.length > 4 ? ', …' : ''}` : '';
      // The probe (the root's list_peers) asks the root's workflow (its review gate) and the run's (the directory).
      const costs = killed[k] === 'worker' ? await killCostOf([agentWorkflowId(run.run_id, run.root.agent_id), runWorkflowId(run.run_id)], killedAt, answeredAt) : '';
      say(`kill ${k + 1}/${killed.length} (${killed[k]}) at ${new Date(killedAt).toISOString().slice(11, 23)}: down ${((restartedAt - killedAt) / 1000).toFixed(1)} s, answering ${recoverySeconds.at(-1)!.toFixed(1)} s after its restart (the answering call took ${((answeredAt - callStarted) / 1000).toFixed(1)} s)${refusals}${costs ? `; ${costs}` : ''}`);
      await sleep(1000 * (o.killEverySeconds[0] + rng.next() * (o.killEverySeconds[1] - o.killEverySeconds[0])));
    }

    // Where the end's time goes, in the log: on a slow machine it is most of a CI run's soak.
    let phase = Date.now();
    const lap = (what: string) => {
      say(`${what} in ${((Date.now() - phase) / 1000).toFixed(1)} s`);
      phase = Date.now();
    };
    const trafficSeconds = (Date.now() - trafficFrom) / 1000;
    await team.stopSending();
    lap('calls in flight finished');
    await team.drain(o.repair ? 15_000 : 60_000);
    lap('deliveries, questions, task creates and sends drained');
    const temporal = await Temporal.connect({ address: stack.temporalAddress, namespace: stack.namespace, channelArgs: HISTORY_CHANNEL_ARGS });
    const doctorOpts = { temporal, bundlePath: stack.bundlePath };
    let replay = await replayAll({ temporal, bundlePath: stack.bundlePath, replayers: replayersForMachine() });
    lap(`${replay.replayed} histories replayed`);
    const largest = replay.largest;
    const largestReplayMs = largest ? await replayMs(stack.bundlePath, await temporal.handle(largest.workflowId, largest.runId).fetchHistory()) : 0;
    const brokenBeforeRepair = replay.nondeterministic.length;
    let repaired = 0;
    if (o.repair && brokenBeforeRepair > 0) {
      for (const f of (await diagnose(doctorOpts)).findings.filter((x) => x.kind === 'nondeterministic')) {
        if (f.resetEventId === undefined) {
          say(`no reset point found for ${f.workflowId}: ${f.message}`);
          continue;
        }
        await repair(doctorOpts, f);
        repaired++;
      }
      say(`repaired ${repaired} of ${brokenBeforeRepair} nondeterministic workflows`);
      await team.drain(60_000);
      replay = await replayAll({ temporal, bundlePath: stack.bundlePath, replayers: replayersForMachine(), skip: (wf) => (wf.status.name === 'RUNNING' ? undefined : 'closed by a repair') });
    }
    await keepHistories(temporal, replay, path.join(o.dataRoot, 'broken'));
    await keepUnsent(temporal, run.run_id, tally, path.join(o.dataRoot, 'unsent'), say);
    await temporal.close();
    stopApproving = true;
    await approving;
    await team.stop();
    const asked = [...tally.questions.values()];
    const askEvents = (await operator.events(run.run_id, 'question_asked')) as { data: { qid: string; to_user: boolean } }[];
    const questions = {
      asked: asked.length,
      answered: asked.filter((q) => q.answered === 1 && q.wrong === 0).length,
      wrong: asked.filter((q) => q.wrong > 0).length,
      unanswered: asked.filter((q) => q.answered === 0 && q.wrong === 0).length,
      workflows: new Set(askEvents.filter((e) => !e.data.to_user).map((e) => e.data.qid)).size,
      rootReviews,
    };
    const unanswered: string[] = [];
    for (const m of team.members) {
      const out = await m.client.call('list_peers', {}).catch(() => undefined);
      if (!out || !answered(out)) unanswered.push(m.agentId);
    }
    const onBoard = await team.tasksByKey();
    const keyed = [...tally.taskKeys.entries()];
    const tasks = {
      keyed: keyed.length,
      answered: keyed.filter(([, n]) => n > 0).length,
      onBoard: onBoard.size,
      duplicates: [...onBoard.values()].filter((n) => n > 1).length,
      missing: keyed.filter(([key, n]) => n > 0 && !onBoard.has(key)).length,
    };
    const sends = { ...(await sendsReport(stack, tally)), viaWebhook };
    lap('invariants checked');
    const lost = [...tally.acknowledged].filter((c) => !tally.delivered.has(c)).length;
    const duplicated = [...tally.delivered.values()].filter((n) => n > 1).length;
    const messages = messagesReport(tally, trafficSeconds);

    const passed =
      replay.nondeterministic.length === 0 &&
      replay.stuck.length === 0 &&
      replay.failed.length === 0 &&
      lost === 0 &&
      duplicated === 0 &&
      messages.untrue.length === 0 &&
      unanswered.length === 0 &&
      questions.answered === questions.asked &&
      questions.workflows === questions.asked &&
      tasks.answered === tasks.keyed &&
      tasks.duplicates === 0 &&
      tasks.missing === 0 &&
      sends.answered === sends.keyed &&
      sends.duplicates === 0 &&
      sends.missing === 0 &&
      sends.auditPairs === sends.answered &&
      sends.chainOk;
    return {
      seed: o.seed,
      kills: killed.length,
      recoverySeconds,
      outageSeconds,
      killed,
      agents: team.members.length,
      calls: tally.calls,
      failedCalls: tally.failedCalls,
      acknowledgedSends: tally.acknowledged.size,
      lost,
      duplicated,
      largestReplayMs,
      messages,
      unanswered,
      questions,
      reviews: tally.reviews,
      tasks,
      sends,
      replay,
      brokenBeforeRepair,
      repaired,
      passed,
    };
  } finally {
    stopApproving = true;
    await team?.stop();
    await team?.close();
    await stack.stop();
  }
}

/**
 * The soak's server keeps history in memory: a failed seed writes the
 * histories it blames to disk, so they can be replayed, studied, or kept as
 * evidence after the server is gone.
 */
async function keepHistories(temporal: Temporal, replay: ReplayReport, dir: string): Promise<void> {
  const blamed = [...replay.nondeterministic, ...replay.stuck, ...replay.failed];
  if (blamed.length === 0) return;
  fs.mkdirSync(dir, { recursive: true });
  for (const p of blamed) {
    const history = await temporal.handle(p.workflowId, p.runId).fetchHistory();
    fs.writeFileSync(path.join(dir, `${p.workflowId.replace(/[^A-Za-z0-9_-]/g, '_')}.history.json`), historyToJSON(history));
  }
}

/** A keyed send that never answered `sent`: what it last answered, and its approval's history on disk. */
async function keepUnsent(temporal: Temporal, runId: string, tally: Tally, dir: string, say: (line: string) => void): Promise<void> {
  for (const [key, r] of tally.sends) {
    if (r.sent) continue;
    say(`send ${key} unsent: approval ${r.approvalId ?? 'none'}, last answer ${r.lastAnswer ?? 'none'}`);
    if (!r.approvalId) continue;
    const history = await temporal.handle(approvalWorkflowId(runId, r.approvalId)).fetchHistory().catch(() => undefined);
    if (!history) continue;
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${r.approvalId}.history.json`), historyToJSON(history));
  }
}

/** An approval system's decision through the signed webhook, as the soak's person's second channel. */
async function approveByWebhook(stack: SoakStack, runId: string, approvalId: string): Promise<boolean> {
  const body = JSON.stringify({ decision: 'approve', approver: 'operator', delivery_id: `soak-${approvalId}` });
  const path = `/hooks/isphere/approvals/${runId}/${approvalId}/decision`;
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-dipper-signature': sign(stack.webhookSecret, { method: 'POST', path, body }) },
    body,
  }).catch(() => undefined);
  return res?.status === 200;
}

/** The soak's sends against what the bridge delivered and what the audit chain holds. */
async function sendsReport(stack: SoakStack, tally: Tally): Promise<Omit<SoakReport['sends'], 'viaWebhook'>> {
  const records = [...tally.sends.values()];
  const res = await fetch(`${stack.sim.url}/_sim/deliveries`, { headers: { authorization: `Bearer ${stack.sim.controlToken}` } });
  const deliveries = ((await res.json()) as { deliveries: { client_message_id: string }[] }).deliveries;
  const count = (approvalId: string | null) => deliveries.filter((d) => d.client_message_id === `dip-${approvalId}`).length;
  const key = derivedAuditKey(stack.tokenSecret);
  const audit = new SqliteAuditStore(paths.audit(stack.dataDir), key);
  const events = new SqliteEventStore(paths.events(stack.dataDir));
  try {
    let auditPairs = 0;
    for (const r of records.filter((x) => x.sent)) {
      const kinds = (await audit.ofApproval(r.approvalId!)).map((e) => `${e.kind}:${e.result}`);
      if (kinds.join(',') === 'intent:null,outcome:sent') auditPairs++;
    }
    const anchors = (await events.ofType(ANCHOR_EVENT, 0, 1_000_000)).map((e) => ({ seq: Number(e.data.seq), hash: String(e.data.hash) }));
    return {
      keyed: records.length,
      answered: records.filter((r) => r.sent).length,
      delivered: records.filter((r) => count(r.approvalId) > 0).length,
      duplicates: records.filter((r) => count(r.approvalId) > 1).length,
      missing: records.filter((r) => r.sent && count(r.approvalId) === 0).length,
      auditPairs,
      chainOk: verifyChain(await audit.rows(), key, anchors).length === 0,
    };
  } finally {
    await audit.close();
    await events.close();
  }
}

export interface MessagesReport {
  /** send_message calls started per second of traffic (a keyed message's repeats not counted). */
  offeredPerSecond: number;
  offered: number;
  /** Refusals send_message answered, by code, repeats included. */
  codes: Record<string, number>;
  /** Answers that were not true: a refusal of a message that was delivered, or of one to a member who is there. */
  untrue: string[];
}

/** Codes that say the recipient is not there to take a message: every soak member is, to the end. */
const NOT_THERE = new Set(['recipient_terminated', 'unknown_recipient', 'task_mismatch']);

function messagesReport(tally: Tally, trafficSeconds: number): MessagesReport {
  const untrue: string[] = [];
  for (const [content, code] of tally.refused) {
    if (tally.delivered.has(content)) untrue.push(`${content}: answered ${code}, delivered`);
    else if (NOT_THERE.has(code)) untrue.push(`${content}: answered ${code} for a member who is there`);
  }
  for (const [content, codes] of tally.reusedAfterRefusal) untrue.push(`${content}: answered ${codes.join(', ')}, then its repeat found it delivered`);
  return {
    offeredPerSecond: trafficSeconds > 0 ? tally.offeredMessages / trafficSeconds : 0,
    offered: tally.offeredMessages,
    codes: Object.fromEntries([...tally.refusalCodes].sort(([a], [b]) => a.localeCompare(b))),
    untrue,
  };
}

/** The report as a few lines for a person. */
function killCounts(killed: Victim[]): string {
  const n = (v: Victim) => killed.filter((k) => k === v).length;
  return [`${n('worker')} worker kills`, ...(n('gateway') > 0 ? [`${n('gateway')} gateway`] : []), ...(n('temporal') > 0 ? [`${n('temporal')} Temporal server`] : [])].join(', ');
}

/** Median and max of the figures that belong to kills of `victim`. */
export function medianMax(seconds: number[], killed: Victim[], victim: Victim): { median: number; max: number; n: number } {
  const mine = seconds.filter((_, i) => killed[i] === victim).sort((a, b) => a - b);
  // The upper median: with an even count, the larger of the middle two (never flatters).
  return { median: mine.length ? mine[Math.floor(mine.length / 2)] : 0, max: mine.at(-1) ?? 0, n: mine.length };
}

function recoveryLine(r: SoakReport, victim: Victim): string {
  const rec = medianMax(r.recoverySeconds, r.killed, victim);
  const out = medianMax(r.outageSeconds, r.killed, victim);
  const name = victim === 'temporal' ? 'Temporal server' : victim;
  return `  after ${rec.n} ${name} kill${rec.n === 1 ? '' : 's'}: answering ${rec.median.toFixed(1)} s (median), ${rec.max.toFixed(1)} s (max) after the restart; ${out.median.toFixed(1)} s / ${out.max.toFixed(1)} s after the kill`;
}

export function describeSoak(r: SoakReport): string {
  return [
    `seed ${r.seed}: ${r.passed ? 'PASSED' : 'FAILED'}`,
    `  ${killCounts(r.killed)}`,
    ...(['worker', 'gateway', 'temporal'] as const).filter((v) => r.killed.includes(v)).map((v) => recoveryLine(r, v)),
    `  ${r.agents} agents, ${r.calls} tool calls (${r.failedCalls} failed during outages), ${r.acknowledgedSends} acknowledged sends: ${r.lost} lost, ${r.duplicated} duplicated`,
    `  send_message: ${r.messages.offered} offered, ${r.messages.offeredPerSecond.toFixed(1)} a second; refusals ${JSON.stringify(r.messages.codes)}; ${r.messages.untrue.length} untrue`,
    ...r.messages.untrue.slice(0, 10).map((u) => `  untrue answer: ${u}`),
    ...(r.brokenBeforeRepair > 0 ? [`  ${r.brokenBeforeRepair} nondeterministic before repair, ${r.repaired} repaired`] : []),
    `  replayed ${r.replay.replayed} histories: ${r.replay.nondeterministic.length} nondeterministic, ${r.replay.stuck.length} stuck, ${r.replay.failed.length} failed; ${r.replay.taskTimeouts} workflow tasks timed out on a worker`,
    `  workflow tasks finished: ${r.replay.taskLatency.tasks}, started to completed median ${r.replay.taskLatency.p50} ms, p99 ${r.replay.taskLatency.p99} ms, max ${r.replay.taskLatency.max} ms; longest history ${r.replay.largestHistory} events, replayed in ${r.largestReplayMs} ms on one thread`,
    `  agents not answering a read: ${r.unanswered.length}`,
    `  ask_user: ${r.questions.asked} asked, ${r.questions.answered} answered once and rightly, ${r.questions.wrong} wrong, ${r.questions.unanswered} unanswered, ${r.questions.workflows} question workflows; ${r.questions.rootReviews} root reviews approved; ${r.reviews} member reviews`,
    `  task_create with a key: ${r.tasks.keyed} keys, ${r.tasks.answered} answered, ${r.tasks.onBoard} on the board, ${r.tasks.duplicates} duplicated, ${r.tasks.missing} missing`,
    `  iSphere sends: ${r.sends.keyed} keyed, ${r.sends.answered} answered sent (${r.sends.viaWebhook} approved by webhook), ${r.sends.delivered} delivered, ${r.sends.duplicates} delivered twice, ${r.sends.missing} missing; ${r.sends.auditPairs} with intent and outcome records; audit chain ${r.sends.chainOk ? 'verifies' : 'BROKEN'}`,
    ...r.replay.nondeterministic.map((p) => `  nondeterministic: ${p.workflowId}: ${p.message}`),
    ...r.replay.stuck.map((p) => `  stuck: ${p.workflowId}: ${p.message}`),
  ].join('\n');
}
