import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import fs from 'node:fs';
import path from 'node:path';
import * as agent from '../../workflows/agent/messages';
import * as isphere from '../../workflows/isphere/messages';
import * as question from '../../workflows/question/messages';
import * as run from '../../workflows/run/messages';
import * as workflows from '../../workflows';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { revokeSignal } from '../../src/common/pure/revocations';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';

/**
 * Today's workflow code must replay the recorded set (capture.ts, `npm run
 * record-histories`). Until the first release the set is recorded again
 * whenever workflows change; this test then shows the set still reaches
 * every workflow type, Signal, Update, timer and continue-as-new.
 */
const root = path.join(__dirname, 'histories');
const files = fs.readdirSync(root).filter((f) => f.endsWith('.json'));

type Json = Record<string, any>;
const histories = new Map<string, Json>(files.map((f) => [f, JSON.parse(fs.readFileSync(path.join(root, f), 'utf8'))]));

/**
 * What a set of histories reaches: workflow types, Signal and Update names, and per type timers, continue-as-new and
 * two Updates accepted by one workflow task (what a worker that comes back to Updates held for it does).
 */
function reached(set: Iterable<Json>) {
  const out = { types: new Set<string>(), signals: new Set<string>(), updates: new Set<string>(), timers: new Set<string>(), continued: new Set<string>(), together: new Set<string>() };
  for (const h of set) {
    const type = h.events[0].workflowExecutionStartedEventAttributes.workflowType.name as string;
    out.types.add(type);
    let acceptedInTask = 0;
    for (const e of h.events as Json[]) {
      if (e.workflowTaskCompletedEventAttributes) acceptedInTask = 0;
      if (e.workflowExecutionUpdateAcceptedEventAttributes && ++acceptedInTask === 2) out.together.add(type);
      if (e.workflowExecutionSignaledEventAttributes) out.signals.add(e.workflowExecutionSignaledEventAttributes.signalName);
      if (e.workflowExecutionUpdateAcceptedEventAttributes) out.updates.add(e.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest.input.name);
      if (e.timerFiredEventAttributes) out.timers.add(type);
      if (e.workflowExecutionContinuedAsNewEventAttributes) out.continued.add(type);
    }
  }
  return out;
}

const defined = (kind: 'signal' | 'update', ...modules: Json[]) =>
  modules.flatMap((mod) => Object.values(mod)).filter((d) => d?.type === kind).map((d) => d.name as string);

/** Reached by no recorded run, each with why. */
const NOT_RECORDED: Record<string, string> = {
  echoWorkflow: 'the benchmark floor; no deployment runs it',
  echo: "echoWorkflow's Update",
  stop: "echoWorkflow's Signal",
  dipperWake: 'sent only when a Query meets a workflow no worker has run since a restart (test/durability/doctor.test.ts)',
};

beforeAll(() => {
  // Replays are quiet unless something is wrong.
  Runtime.install({ logger: new DefaultLogger('WARN') });
});

describe('the recorded set', () => {
  const got = reached(histories.values());
  const missing = (names: string[], have: Set<string>) => names.filter((n) => !have.has(n) && !NOT_RECORDED[n]);

  it('reaches every workflow type', () => {
    expect(missing(Object.keys(workflows), got.types)).toEqual([]);
  });

  it('reaches every Signal and Update', () => {
    expect(missing([...defined('signal', agent, run, question, isphere, { wakeSignal, revokeSignal })], got.signals)).toEqual([]);
    expect(missing(defined('update', agent, run, question, isphere), got.updates)).toEqual([]);
  });

  it('fires timers and continues as new', () => {
    for (const type of ['agentWorkflow', 'runWorkflow', 'questionWorkflow', 'isphereApprovalWorkflow']) expect([type, got.timers.has(type)]).toEqual([type, true]);
    expect(got.continued.has('agentWorkflow')).toBe(true);
  });

  it('accepts an approval\'s decision and its send in one workflow task', () => {
    expect(got.together.has('isphereApprovalWorkflow')).toBe(true);
  });

  it('holds approval decisions made through the gateway, each with its signature, every approved one sent or expired', () => {
    const decisions: { proof?: { signatures?: unknown[] }; decision: string }[] = [];
    for (const h of histories.values()) {
      for (const e of h.events as Json[]) {
        const input = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input;
        if (input?.name !== isphere.decideUpdate.name) continue;
        decisions.push(JSON.parse(Buffer.from(input.args.payloads[0].data, 'base64').toString('utf8')));
      }
    }
    expect(decisions.length).toBeGreaterThanOrEqual(3);
    for (const d of decisions) expect(d.proof?.signatures?.length).toBeGreaterThanOrEqual(1);
    expect(new Set(decisions.map((d) => d.decision))).toEqual(new Set(['approve', 'reject']));
  });

  it("holds a person's answers to questions, each with the gateway's signature, and the run's root verdict handed on with it", () => {
    const byPerson: { by?: { operator?: string }; proof?: { signatures?: unknown[] }; asked_at?: number; report_ts?: number }[] = [];
    const handedOn: { proof?: { signatures?: unknown[] }; given?: unknown[] }[] = [];
    for (const h of histories.values()) {
      for (const e of h.events as Json[]) {
        const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest.input;
        if (update?.name === 'answerQuestion' || update?.name === 'rootDecision') {
          const a = JSON.parse(Buffer.from(update.args.payloads[0].data, 'base64').toString('utf8'));
          if (a.by?.operator !== undefined || update.name === 'rootDecision') byPerson.push(a);
        }
        const signal = e.workflowExecutionSignaledEventAttributes;
        if (signal?.signalName === 'rootAnswered') handedOn.push(JSON.parse(Buffer.from(signal.input.payloads[0].data, 'base64').toString('utf8')));
      }
    }
    expect(byPerson.length).toBeGreaterThanOrEqual(1);
    expect(handedOn.length).toBeGreaterThanOrEqual(1);
    for (const d of [...byPerson, ...handedOn]) expect(d.proof?.signatures?.length).toBeGreaterThanOrEqual(1);
    // Each names what the person looked at: the question as asked, or the report decided.
    for (const d of byPerson) expect(typeof (d.asked_at ?? d.report_ts)).toBe('number');
    expect(byPerson.some((d) => d.report_ts !== undefined)).toBe(true);
  });

  it('would notice a type, a Signal or an Update that no history reaches', () => {
    const without = reached([...histories.values()].filter((h) => h.events[0].workflowExecutionStartedEventAttributes.workflowType.name !== 'questionWorkflow'));
    expect(missing(Object.keys(workflows), without.types)).toEqual(['questionWorkflow']);
    expect(missing(defined('update', question), without.updates).length).toBeGreaterThan(0);
  });

  it.each(files)('%s replays without nondeterminism', (file) => {
    expect(replayed.has(file)).toBe(true);
    expect(replayed.get(file)).toBeUndefined();
  });
});

/**
 * Every file's replay error (undefined when it replayed), from one replay
 * worker taking the files in turn: a worker per file loads the bundle 55
 * times, about 2 s each on a busy machine.
 */
const replayed = new Map<string, unknown>();
beforeAll(async () => {
  const inputs = files.map((file) => ({ workflowId: histories.get(file)!.events[0].workflowExecutionStartedEventAttributes.workflowId ?? file, history: histories.get(file)! }));
  let i = 0;
  for await (const result of Worker.runReplayHistories(replayOptions({ codePath: readTestEnv().bundlePath }, 'recorded-set'), inputs)) {
    replayed.set(files[i++], result.error);
  }
}, 300_000);
