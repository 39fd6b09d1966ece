import { closeAll, env, operator, startRun, task } from '../support/team';

afterAll(closeAll);

/** This gateway's count of one typed Temporal operation metric (src/temporal), by operation. */
async function counts(metric: 'dipper_temporal_operations_total' | 'dipper_temporal_operation_failures_total'): Promise<Record<string, number>> {
  const res = await fetch(`${env.gatewayUrl}/api/metrics`, { headers: { authorization: `Bearer ${env.operatorToken}` } });
  expect(res.status).toBe(200);
  const out: Record<string, number> = {};
  for (const line of (await res.text()).split('\n')) {
    const op = line.startsWith(`${metric}{`) ? /operation="(\w+)"/.exec(line)?.[1] : undefined;
    if (op) out[op] = Number(line.split(' ').at(-1));
  }
  return out;
}

const grew = (before: Record<string, number>, after: Record<string, number>, op: string) => (after[op] ?? 0) - (before[op] ?? 0);

describe('the typed path to Temporal', () => {
  it('counts each operation the gateway makes, and each that fails', async () => {
    const calls = await counts('dipper_temporal_operations_total');
    const failures = await counts('dipper_temporal_operation_failures_total');
    const { root, runId } = await startRun();
    await root.ok('list_peers');
    await root.ok('declare_plan', { tasks: [task('t')] });
    // An approval that does not exist: its Query fails (not found), and the route says so.
    expect((await operator.request('GET', `/runs/${runId}/isphere/approvals/apr_missing`)).status).toBe(404);
    const callsAfter = await counts('dipper_temporal_operations_total');
    const failuresAfter = await counts('dipper_temporal_operation_failures_total');
    expect(grew(calls, callsAfter, 'start')).toBeGreaterThanOrEqual(1);
    expect(grew(calls, callsAfter, 'query')).toBeGreaterThanOrEqual(2);
    expect(grew(calls, callsAfter, 'update')).toBeGreaterThanOrEqual(1);
    expect(grew(failures, failuresAfter, 'query')).toBeGreaterThanOrEqual(1);
  });
});
