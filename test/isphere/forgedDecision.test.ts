import fs from 'node:fs';
import path from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { DecisionKeys } from '../../src/auth/decisionKeys';
import { approvalWorkflowId } from '../../workflows/ids';
import { isphereApprovalWorkflow } from '../../workflows/isphere/approval';
import { approvalClaim, decideUpdate, type ApprovalInput, type Decision } from '../../workflows/isphere/messages';
import { testDataRoot } from '../setup/env';
import { eventually } from '../support/clients';
import { temporalForFile } from '../support/temporal';
import { closeAll, connect, operator } from '../support/team';
import { sim } from './support';

/**
 * Issue 21's attack: a caller who reaches Temporal itself (an agent process
 * that found its port) sends the decide Update of its own approval. Only a
 * decision the gateway signed for an operator or webhook it authenticated
 * is taken (src/common/pure/decisionProof.ts); the send checks again with the
 * worker's own keys, so even an approval workflow started by the forger
 * with a key of its own sends nothing.
 */
const temporal = temporalForFile(closeAll);

const ana: Decision = { approver: 'operator', via: 'console', decision: 'approve' };

async function askToSend(words: string) {
  const run = (await operator.request('POST', '/runs', { task: 'Send one thing.' })).json as { run_id: string; root: { agent_token: string } };
  const isphere = await connect(run.root.agent_token, 'isphere');
  const send = { target_type: 'group', target_id: 'g_0003', content_text: words };
  const plan = await isphere.ok('isphere_send_message', send);
  const approvalId = plan.approval.approval_id as string;
  return { runId: run.run_id, approvalId, isphere, send, handle: temporal.client.workflow.getHandle(approvalWorkflowId(run.run_id, approvalId)) };
}

const refusalOf = (err: unknown) => (err instanceof WorkflowUpdateFailedError ? (err.cause as { type?: string } | undefined)?.type : String(err));
const statusOf = async (runId: string, approvalId: string) => ((await operator.request('GET', `/runs/${runId}/isphere/approvals/${approvalId}`)).json as { status: string }).status;

it('a decide Update sent straight to Temporal, bare or signed with another key, is refused before it enters history and sends nothing', async () => {
  const a = await askToSend('Forged approval, please.');
  const { binding } = (await operator.request('GET', `/runs/${a.runId}/isphere/approvals/${a.approvalId}`)).json as { binding: ApprovalInput['binding'] };
  const outsider = new DecisionKeys(['not-the-gateway-secret']);
  const forgeries: Decision[] = [ana, { ...ana, proof: outsider.prove(approvalClaim(a.runId, a.approvalId, binding, ana, Date.now())) }];
  for (const forged of forgeries) {
    const answer = await a.handle.executeUpdate(decideUpdate, { args: [forged] }).then(() => 'taken', refusalOf);
    expect(answer).toBe('unproven_decision');
  }
  // Nothing shows it: the approval waits for a person, its history holds no accepted Update, the agent cannot send.
  expect(await statusOf(a.runId, a.approvalId)).toBe('pending');
  const history = await a.handle.fetchHistory();
  expect((history.events ?? []).filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toEqual([]);
  const early = await a.isphere.call('isphere_send_message', { ...a.send, dry_run: false, approval_id: a.approvalId });
  expect(early.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'pending' } });
  // Recorded as refused, where the operator looks: the worker's log names the approval.
  await eventually(async () => {
    const log = fs.readFileSync(path.join(testDataRoot, 'worker.log'), 'utf8');
    return log.split('\n').some((l) => l.includes('refused a decision without a valid proof') && l.includes(a.approvalId)) ? true : undefined;
  }, 10_000);

  // The operator's own decision, signed by the gateway, is taken and the send goes out once.
  expect((await operator.request('POST', `/runs/${a.runId}/isphere/approvals/${a.approvalId}/approve`, {})).json).toEqual({ status: 'approved', already: false });
  const sent = await a.isphere.ok('isphere_send_message', { ...a.send, dry_run: false, approval_id: a.approvalId });
  expect(sent.send_status).toBe('sent');
  expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${a.approvalId}`)).toHaveLength(1);
});

it('an approval workflow the forger started itself, with a key of its own, approves but sends nothing and records nothing', async () => {
  const a = await askToSend('Forged workflow, please.');
  const started = (await a.handle.fetchHistory()).events![0].workflowExecutionStartedEventAttributes!;
  const input = JSON.parse(Buffer.from(started.input!.payloads![0].data!).toString('utf8')) as ApprovalInput;
  expect(input.decisionKeys?.length).toBeGreaterThan(0);
  // The forger ends the real approval and starts one under the same id whose decisions it can sign.
  await a.handle.terminate('replaced by a forger');
  const outsider = new DecisionKeys(['not-the-gateway-secret']);
  const forged = await temporal.client.workflow.start(isphereApprovalWorkflow, { workflowId: a.handle.workflowId, taskQueue: started.taskQueue!.name!, args: [{ ...input, decisionKeys: outsider.publicKeys }] });
  const decided = await forged.executeUpdate(decideUpdate, { args: [{ ...ana, proof: outsider.prove(approvalClaim(a.runId, a.approvalId, input.binding, ana, Date.now())) }] });
  expect(decided.status).toBe('approved');

  // The agent's real send reaches the forged approval; the worker's own keys refuse it before the intent record.
  const answer = await a.isphere.call('isphere_send_message', { ...a.send, dry_run: false, approval_id: a.approvalId });
  expect(answer.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'unproven' } });
  expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${a.approvalId}`)).toEqual([]);
  const audit = (await operator.request('GET', '/isphere/audit?limit=200')).json as { records: { approval_id: string }[] };
  expect(audit.records.filter((r) => r.approval_id === a.approvalId)).toEqual([]);
  await forged.terminate('test over');
});
