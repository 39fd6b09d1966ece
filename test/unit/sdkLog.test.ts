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
});
