import { Metadata } from '@grpc/grpc-js';
import { google, temporal } from '@temporalio/proto';
import { busyWorkflow, grpcRetryOptions } from '../../src/temporal/retry';

/** A RESOURCE_EXHAUSTED status as the server sends it: its cause in the status details. */
function exhausted(cause: temporal.api.enums.v1.ResourceExhaustedCause) {
  const detail = temporal.api.errordetails.v1.ResourceExhaustedFailure.encode({ cause }).finish();
  const status = google.rpc.Status.encode({
    code: 8,
    message: 'workflow operation can not be applied because workflow is closing',
    details: [{ type_url: 'type.googleapis.com/temporal.api.errordetails.v1.ResourceExhaustedFailure', value: detail }],
  }).finish();
  const metadata = new Metadata();
  metadata.set('grpc-status-details-bin', Buffer.from(status));
  return { code: 8, details: 'workflow operation can not be applied because workflow is closing', metadata };
}

const { ResourceExhaustedCause } = temporal.api.enums.v1;

it('reads a busy workflow from the refusal\'s status details, and nothing else as one', () => {
  expect(busyWorkflow(exhausted(ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_BUSY_WORKFLOW))).toBe(true);
  expect(busyWorkflow(exhausted(ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT))).toBe(false);
  const garbled = new Metadata();
  garbled.set('grpc-status-details-bin', Buffer.from([0xff, 0x01, 0x02]));
  expect(busyWorkflow({ metadata: garbled })).toBe(false);
  expect(busyWorkflow({ metadata: new Metadata() })).toBe(false);
});

it('waits a workflow task\'s time after a busy workflow, and the SDK\'s own second after a namespace over its rate', () => {
  const { delayFunction, retryableDecider } = grpcRetryOptions();
  const busy = exhausted(ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_BUSY_WORKFLOW);
  const rate = exhausted(ResourceExhaustedCause.RESOURCE_EXHAUSTED_CAUSE_RPS_LIMIT);
  expect(retryableDecider(1, busy)).toBe(true);
  // Jitter is at most a fifth either way.
  expect(delayFunction(1, busy)).toBeLessThanOrEqual(25 * 1.7 * 1.2);
  expect(delayFunction(1, rate)).toBeGreaterThanOrEqual(1000 * 1.7 * 0.8);
  // Ten attempts after a busy workflow span a few seconds, far past a continue-as-new.
  const total = Array.from({ length: 10 }, (_, i) => delayFunction(i + 1, busy)).reduce((a, b) => a + b, 0);
  expect(total).toBeGreaterThan(1000);
});
