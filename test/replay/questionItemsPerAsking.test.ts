import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import fs from 'node:fs';
import path from 'node:path';
import { replayOptions } from '../../src/ops/replayAll';
import { readTestEnv } from '../setup/env';
import { projectRoot } from '../support/processes';
import { patchIds, recordedSet, workflowType, type HistoryEvent } from '../support/historyShape';

/**
 * Questions whose inbox items were named by the qid alone (`<qid>-<hop>`),
 * from the recorded set of ad04456: the same words asked again once the
 * first asking had closed made the same names, and the holder's inbox
 * dropped the second asking. Runs like it replay that naming (no
 * `question-items-per-asking` marker), and pass to their first holder
 * while routing, as they did; the recorded set, recorded again since,
 * holds only the new naming. docs/decisions.md, "Questions".
 */
const raw = JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'fixtures', 'histories', 'question-items-by-qid.history.json'), 'utf8'));

/** The names of the inbox items a question sent its holders, in order. */
const itemsSent = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => {
    const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (sent?.signalName !== 'systemMessage') return [];
    return [JSON.parse(Buffer.from(sent.input.payloads[0].data, 'base64').toString('utf8')).message_id as string];
  });

const qidOf = (events: HistoryEvent[]): string => JSON.parse(Buffer.from(events[0].workflowExecutionStartedEventAttributes.input.payloads[0].data, 'base64').toString('utf8')).qid;

it('has the old naming: the item is the qid and the hop, and no marker', () => {
  expect(itemsSent(raw.events)).toEqual([`${qidOf(raw.events)}-1`]);
  expect(patchIds(raw.events)).not.toContain('question-items-per-asking');
});

it("replays with today's code, which names its items the old way", async () => {
  await expect(Worker.runReplayHistory(replayOptions({ codePath: readTestEnv().bundlePath }, 'question-items-fixture'), historyFromJSON(raw), 'question-items-by-qid')).resolves.toBeUndefined();
});

it("is gone from the recorded set: every question's items carry its own run id", () => {
  const questions = [...recordedSet().values()].filter((events) => workflowType(events) === 'questionWorkflow');
  const toAgents = questions.filter((events) => itemsSent(events).some((id) => !id.endsWith('-answer')));
  expect(toAgents.length).toBeGreaterThan(0);
  for (const events of questions) expect(patchIds(events)).toContain('question-items-per-asking');
  for (const events of toAgents) {
    const runEnd = String(events[0].workflowExecutionStartedEventAttributes.firstExecutionRunId).slice(-12);
    for (const id of itemsSent(events).filter((i) => !i.endsWith('-answer'))) expect(id).toMatch(new RegExp(`^${qidOf(events)}-${runEnd}-\\d+$`));
  }
});
