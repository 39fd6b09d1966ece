import { msNumberToTs } from '@temporalio/common/lib/time';
import Long from 'long';
import { latencyOf, workflowTaskMs } from '../../src/ops/taskLatency';

const at = (eventId: number, ms: number, attrs: Record<string, unknown>) => ({ eventId: Long.fromNumber(eventId), eventTime: msNumberToTs(ms), ...attrs });

describe('workflow task latency from a history', () => {
  it('measures each finished task from its start to its completion, and leaves out tasks that timed out', () => {
    const events = [
      at(2, 1_000, { workflowTaskScheduledEventAttributes: {} }),
      at(3, 1_010, { workflowTaskStartedEventAttributes: {} }),
      at(4, 1_045, { workflowTaskCompletedEventAttributes: { startedEventId: Long.fromNumber(3) } }),
      at(5, 2_000, { workflowTaskScheduledEventAttributes: {} }),
      at(6, 2_001, { workflowTaskStartedEventAttributes: {} }),
      // Killed holding it: timed out, not finished.
      at(7, 12_001, { workflowTaskTimedOutEventAttributes: { startedEventId: Long.fromNumber(6) } }),
      at(8, 12_001, { workflowTaskScheduledEventAttributes: {} }),
      at(9, 12_300, { workflowTaskStartedEventAttributes: {} }),
      at(10, 12_720, { workflowTaskCompletedEventAttributes: { startedEventId: Long.fromNumber(9) } }),
    ];
    expect(workflowTaskMs(events)).toEqual([35, 420]);
  });

  it('summarizes by nearest rank', () => {
    const ms = Array.from({ length: 200 }, (_, i) => i + 1);
    expect(latencyOf(ms)).toEqual({ tasks: 200, p50: 100, p99: 198, max: 200 });
    expect(latencyOf([])).toEqual({ tasks: 0, p50: 0, p99: 0, max: 0 });
  });
});
