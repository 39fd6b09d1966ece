import { sdkLine } from '../../src/worker/sdkLog';

/** The SDK's own log, as the worker writes it: one plain line, nothing internal. */
describe("the SDK's log lines", () => {
  it('says a late activity completion once, in words, without its token or the status dump', () => {
    const line = sdkLine({
      level: 'WARN',
      message: 'Activity not found on completion. This may happen if the activity has already been cancelled but completed anyway.',
      meta: { task_token: 'CiQ2ZmQ…', details: 'Status { code: NotFound, message: "workflow execution already completed", metadata: MetadataMap { headers: {"content-type": "application/grpc"} } }', sdkComponent: 'core' },
    });
    expect(line).toEqual({
      level: 'info',
      fields: { sdkComponent: 'core', sdk: 'Activity not found on completion' },
      msg: 'an activity finished after its workflow had cancelled it or closed; the server no longer wanted its result (harmless)',
    });
  });

  it('says an activation for a workflow no longer held as a warning, and keeps a real failure an error without its stack', () => {
    const untracked = new Error('Received workflow activation for an untracked workflow with no init workflow job');
    expect(sdkLine({ level: 'ERROR', message: 'Failed to process Workflow Activation', meta: { runId: 'r', error: untracked, workflowExists: false } })).toMatchObject({ level: 'warn', fields: { workflowExists: false } });
    const real = new Error('boom');
    real.stack = 'Error: boom\n    at somewhere (file.js:1:1)';
    const line = sdkLine({ level: 'ERROR', message: 'Failed to process Workflow Activation', meta: { runId: '0f1e2d3c-aaaa-bbbb-cccc-000011112222', error: real } });
    expect(line).toEqual({ level: 'error', fields: { err: 'boom' }, msg: 'Failed to process Workflow Activation' });
    expect(JSON.stringify(line)).not.toContain('somewhere');
  });

  it("keeps the core's failures to their message: a refused cold Query said once, a real failure without the JS stack it carries", () => {
    const dump = (message: string) =>
      `Failure { failure: Some(Failure { message: "${message}", source: "TypeScriptSDK", stack_trace: "/x/workflow-bundle.js:14432\n  throw new Error(QUERY_COLD);\n\nError: ${message}\n    at QueryCannotAdvance.activate (/work/main/workflows/interceptors.ts:80:55)", encoded_attributes: None }) }`;
    const cold = sdkLine({ level: 'WARN', message: 'Failing legacy query request', meta: { sdkComponent: 'core', failure: dump('dipper: not run by this worker yet; wake it and ask again') } });
    expect(cold.level).toBe('debug');
    const js = sdkLine({ level: 'ERROR', message: 'Failed to process Workflow Activation', meta: { error: new Error('dipper: not run by this worker yet; wake it and ask again'), workflowType: 'runWorkflow' } });
    expect(js).toMatchObject({ level: 'info', fields: { workflowType: 'runWorkflow' } });
    const broken = sdkLine({ level: 'WARN', message: 'Failing workflow task', meta: { sdkComponent: 'core', failure: dump('[TMPRL1100] Nondeterminism error: Update machine does not handle this event') } });
    expect(broken).toEqual({ level: 'warn', fields: { sdkComponent: 'core', err: '[TMPRL1100] Nondeterminism error: Update machine does not handle this event' }, msg: 'Failing workflow task' });
    expect(JSON.stringify([cold, js, broken])).not.toMatch(/interceptors\.ts|stack_trace|workflow-bundle/);
  });
});
