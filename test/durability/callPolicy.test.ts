import { randomUUID } from 'node:crypto';
import { echoCountQuery, echoUpdate, echoWorkflow } from '../../workflows/bench/echoWorkflow';
import { Approvals } from '../../src/isphere/approvals';
import { loadConfig } from '../../src/config';
import { failureOf, Temporal, type CallPolicy } from '../../src/temporal';
import { approvalWorkflowId } from '../../workflows/ids';
import { readTestEnv } from '../setup/env';
import { tlsFromEnv } from '../../src/temporal/tls';

/**
 * The call policy belongs to the connection, not to a caller that opts in:
 * a workflow no worker serves leaves every call unanswered, and each must
 * still end by the policy's deadline with a failure the error map reads as
 * "no answer" (which the tools answer `unavailable`), whoever made it. The
 * iSphere approvals once reached Temporal with none, and an approval whose
 * worker was gone held a send call until the client gave up.
 */
const env = readTestEnv();
const opened: Temporal[] = [];
afterAll(() => Promise.all(opened.map((t) => t.close())));

async function connect(policy: CallPolicy): Promise<Temporal> {
  const tls = tlsFromEnv(env.processEnv);
  const t = await Temporal.connect({ address: env.temporalAddress, ...(tls ? { tls } : {}), namespace: env.namespace, policy });
  opened.push(t);
  return t;
}

/** A workflow on a task queue no worker polls: it never runs a workflow task, so nothing sent to it is answered. */
async function unserved(temporal: Temporal, workflowId = `call-policy-${randomUUID()}`) {
  const handle = await temporal.start(echoWorkflow, { workflowId, taskQueue: `dipper-no-worker-${randomUUID()}`, args: [] });
  return handle;
}

const noAnswer = (err: unknown) => failureOf(err).kind;

it('a Query and an Update to a workflow no worker serves end by the connection’s deadline as no answer, with no deadline of the caller’s', async () => {
  const temporal = await connect({ callTimeoutMs: 1500, stickyTimeoutMs: 5000 });
  const handle = await unserved(temporal);
  try {
    expect(await handle.query(echoCountQuery).then(() => 'answered', noAnswer)).toBe('no_answer');
    expect(await handle.update(echoUpdate, ['hello']).then(() => 'answered', noAnswer)).toBe('no_answer');
  } finally {
    await handle.terminate('test over');
  }
});

it('the iSphere approvals reach Temporal only under that policy: a look at an approval no worker serves ends as no answer', async () => {
  const temporal = await connect({ callTimeoutMs: 1500, stickyTimeoutMs: 5000 });
  const runId = `run_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const approvalId = `apr_${randomUUID().replace(/-/g, '')}`;
  // Any workflow under the approval's id will do: nothing serves it, so the approval's Query is never answered.
  const handle = await unserved(temporal, approvalWorkflowId(runId, approvalId));
  const config = loadConfig(env.processEnv);
  const approvals = new Approvals(temporal, 'unused', config.isphere, 1000, []);
  try {
    expect(await approvals.view(runId, approvalId).then(() => 'answered', noAnswer)).toBe('no_answer');
  } finally {
    await handle.terminate('test over');
  }
});
