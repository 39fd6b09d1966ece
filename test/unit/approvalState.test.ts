import { DecisionKeys } from '../../src/auth/decisionKeys';
import { ApprovalState, TRANSITIONS } from '../../workflows/isphere/approvalState';
import { approvalClaim, type ApprovalInput, type ApprovalStatus, type Binding, type Decision, type SendOutcome } from '../../workflows/isphere/messages';

const binding: Binding = {
  tool: 'isphere_send_message',
  target: { target_type: 'contact', target_id: 'c_0003', display_name: 'Li Wei' },
  content_sha256: 'a'.repeat(64),
  file_sha256: null,
  file_size_bytes: null,
  key_sha256: 'k'.repeat(64),
};
const input: ApprovalInput = {
  runId: 'run_x',
  approvalId: 'apr_x',
  requester: { agent_id: 'ag_asker', role: 'writer' },
  binding,
  words: 'Hello.',
  source: 'bridge',
  decisionMs: 60_000,
  useMs: 60_000,
  receiptMs: 1000,
  reconcileMs: 60_000,
  attemptMs: 10_000,
  decisionKeys: new DecisionKeys(['gateway-secret']).publicKeys,
};
const sent: SendOutcome = { result: 'sent', message_ref: 'm_1', file_ref: null, reconciled: false, reason: null };
const T0 = 1_000_000;
const gateway = new DecisionKeys(['gateway-secret']);

/** A decision as the gateway sends it: signed over this approval and what it sends. */
const signed = (d: Decision, keys = gateway, about = input): Decision => ({ ...d, proof: keys.prove(approvalClaim(about.runId, about.approvalId, about.binding, d, T0 - 5)) });

/** Each thing that can happen to an approval, as the workflow does it: a check first where a caller is involved. */
const steps: Record<string, (a: ApprovalState) => void> = {
  approve: (a) => (a.checkDecide(signed({ approver: 'Ana', via: 'console', decision: 'approve' }), T0), a.decide(signed({ approver: 'Ana', via: 'console', decision: 'approve' }), T0)),
  reject: (a) => (a.checkDecide(signed({ approver: 'Ana', via: 'api', decision: 'reject', reason: 'No.' }), T0), a.decide(signed({ approver: 'Ana', via: 'api', decision: 'reject', reason: 'No.' }), T0)),
  send: (a) => (a.checkSend({ requester: 'ag_asker', binding }, T0), a.beginSend({ requester: 'ag_asker', binding })),
  cannotBegin: (a) => a.sendRefused({ code: 'source_unavailable', message: 'Down.', extra: {} }),
  sent: (a) => a.sendDone(sent, 7),
  expire: (a) => a.expire(),
  runEnds: (a) => a.endRun(),
};

/** Every sequence of up to `depth` steps from a fresh approval: the moves the steps made, and the statuses reached. */
function explore(depth: number) {
  const moves = new Set<string>();
  const reached = new Set<ApprovalStatus>(['pending']);
  const walk = (path: string[]) => {
    if (path.length === depth) return;
    for (const name of Object.keys(steps)) {
      const a = new ApprovalState(input, T0);
      for (const p of path) steps[p](a);
      const before = a.status;
      const seen = JSON.stringify(a.view());
      try {
        steps[name](a);
      } catch {
        expect(JSON.stringify(a.view())).toBe(seen); // a refused step changes nothing
        continue;
      }
      if (a.status !== before) moves.add(`${before} -> ${a.status}`);
      reached.add(a.status);
      walk([...path, name]);
    }
  };
  walk([]);
  return { moves, reached };
}

describe('an approval\'s statuses', () => {
  const { moves, reached } = explore(5);
  const table = Object.entries(TRANSITIONS).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`));

  it('move exactly as the transition table says: every listed move happens, and no other', () => {
    expect([...moves].sort()).toEqual([...table].sort());
  });

  it('reach every status, and the four ends have no way out', () => {
    expect([...reached].sort()).toEqual(Object.keys(TRANSITIONS).sort());
    for (const end of ['rejected', 'expired', 'cancelled', 'done'] as const) expect(TRANSITIONS[end]).toEqual([]);
  });

  it('refuse a move the table does not list, changing nothing', () => {
    const a = new ApprovalState(input, T0);
    expect(() => a.sendDone(sent, 1)).toThrow(/pending cannot become done/);
    expect(a.view()).toMatchObject({ status: 'pending', outcome: null, audit_seq: null });
    expect(() => a.sendRefused({ code: 'x', message: 'x', extra: {} })).toThrow(/pending cannot become approved/);
    expect(a.view()).toMatchObject({ status: 'pending', attempt: 0 });
  });
});

describe('an approval\'s rules', () => {
  const approved = () => {
    const a = new ApprovalState(input, T0);
    steps.approve(a);
    return a;
  };

  it('are decided once; a repeated webhook delivery is answered, not decided again', () => {
    const a = new ApprovalState(input, T0);
    const hook = signed({ approver: 'Ana', via: 'webhook', decision: 'approve', delivery_id: 'd1' });
    expect(a.decide(hook, T0)).toBe('approved');
    expect(() => a.checkDecide(hook, T0)).not.toThrow();
    expect(a.decide(hook, T0)).toBe('repeat');
    expect(() => a.checkDecide(signed({ approver: 'Ana', via: 'webhook', decision: 'approve', delivery_id: 'd2' }), T0)).toThrow(/is approved/);
  });

  it('take only a decision the gateway signed, over this approval, as it was made', () => {
    const a = new ApprovalState(input, T0);
    const ana: Decision = { approver: 'Ana', via: 'console', decision: 'approve' };
    const unproven = /proof/;
    expect(() => a.checkDecide(ana, T0)).toThrow(unproven);
    expect(() => a.checkDecide(signed(ana, new DecisionKeys(['someone-else'])), T0)).toThrow(unproven);
    expect(() => a.checkDecide(signed(ana, gateway, { ...input, approvalId: 'apr_other' }), T0)).toThrow(unproven);
    expect(() => a.checkDecide(signed(ana, gateway, { ...input, binding: { ...binding, content_sha256: 'b'.repeat(64) } }), T0)).toThrow(unproven);
    // The signature of one decision does not carry another: who, what, or the time it was made.
    const proof = signed(ana).proof;
    expect(() => a.checkDecide({ ...ana, approver: 'Mallory', proof }, T0)).toThrow(unproven);
    expect(() => a.checkDecide({ ...ana, decision: 'reject', reason: 'Changed.', proof }, T0)).toThrow(unproven);
    expect(() => a.checkDecide({ ...ana, proof: { ...proof!, at: proof!.at + 1 } }, T0)).toThrow(unproven);
    expect(() => a.checkDecide({ ...ana, proof: { at: proof!.at, signatures: [{ key: 'zz', sig: 'not hex' }] } }, T0)).toThrow(unproven);
    expect(a.status).toBe('pending');
    expect(() => a.checkDecide(signed(ana), T0)).not.toThrow();
    // A gateway mid-rotation signs with the new secret and the old: an approval started under the old one takes it.
    expect(() => a.checkDecide(signed(ana, new DecisionKeys(['new-secret', 'gateway-secret'])), T0)).not.toThrow();
  });

  it('never let the requester approve, nor reject without a reason, nor decide after the decision time', () => {
    const a = new ApprovalState(input, T0);
    expect(() => a.checkDecide(signed({ approver: 'ag_asker', via: 'api', decision: 'approve' }), T0)).toThrow(/cannot approve/);
    expect(() => a.checkDecide(signed({ approver: 'Ana', via: 'api', decision: 'reject', reason: ' ' }), T0)).toThrow(/needs a reason/);
    expect(() => a.checkDecide(signed({ approver: 'Ana', via: 'api', decision: 'approve' }), T0 + input.decisionMs)).toThrow(/expired/);
  });

  it('send once: the same key attaches, another key is a second send, another agent or binding is refused', () => {
    const a = approved();
    expect(a.beginSend({ requester: 'ag_asker', binding })).toEqual({ repeat: false, attempt: 0 });
    expect(() => a.checkSend({ requester: 'ag_asker', binding }, T0)).not.toThrow();
    expect(a.beginSend({ requester: 'ag_asker', binding })).toEqual({ repeat: true, attempt: 0 });
    expect(() => a.checkSend({ requester: 'ag_asker', binding: { ...binding, key_sha256: 'z'.repeat(64) } }, T0)).toThrow(/already used/);
    expect(() => a.checkSend({ requester: 'ag_other', binding }, T0)).toThrow(/another agent/);
    expect(() => a.checkSend({ requester: 'ag_asker', binding: { ...binding, content_sha256: 'b'.repeat(64) } }, T0)).toThrow(/another target/);
  });

  it('answer the callers of a send that could not begin with why, and let the next call start afresh', () => {
    const a = approved();
    const first = a.beginSend({ requester: 'ag_asker', binding });
    expect(a.answerFor(first.attempt)).toBeUndefined();
    a.sendRefused({ code: 'source_unavailable', message: 'Down.', extra: {} });
    expect(a.answerFor(first.attempt)).toEqual({ refusal: { attempt: 0, code: 'source_unavailable', message: 'Down.', extra: {} } });
    const second = a.beginSend({ requester: 'ag_asker', binding });
    expect(second).toEqual({ repeat: false, attempt: 1 });
    a.sendDone(sent, 9);
    expect(a.answerFor(second.attempt)).toEqual({ outcome: sent });
    expect(a.view()).toMatchObject({ status: 'done', audit_seq: 9, attempt: 1 });
  });

  it('expire unused after the use-by time, and end with the run unless a send is under way', () => {
    expect(() => approved().checkSend({ requester: 'ag_asker', binding }, T0 + input.useMs)).toThrow(/expired unused/);
    const sending = approved();
    sending.beginSend({ requester: 'ag_asker', binding });
    sending.endRun();
    expect([sending.status, sending.runEnded]).toEqual(['sending', true]);
    const waiting = approved();
    waiting.endRun();
    expect(waiting.status).toBe('cancelled');
  });
});
