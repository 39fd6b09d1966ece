import fs from 'node:fs';
import path from 'node:path';
import { resetEventId } from '../../src/ops/doctor';
import { projectRoot } from '../support/processes';

/**
 * The history captured after the kill -9 of issue 5: one agentWorkflow of
 * main at c1efba7, run with 10 agents messaging each other while the worker
 * was killed with SIGKILL and restarted. Copied from the evidence folder
 * beside the repository (shared/evidence/worker-kill-nondeterminism.history.json,
 * described in that folder's README), so the test stands alone. Its first
 * task after the timed-out one scheduled recordEvents (940) before
 * accepting an Update (941), and replay then failed at 940: replay always
 * accepts the Update first. docs/decisions.md, "A Query must not outlive a
 * dead worker", says how it came about. The code that made it has since
 * been rewritten (its patch markers no longer replay): the history is data
 * for the doctor's reading of it.
 */
const file = path.join(projectRoot, 'test', 'fixtures', 'histories', 'worker-kill-nondeterminism.history.json');
const history = JSON.parse(fs.readFileSync(file, 'utf8'));

it('gives the doctor the task that produced those commands as the reset point', () => {
  const message = 'Nondeterminism error: Update machine does not handle this event: HistoryEvent(id: 940, ActivityTaskScheduled)';
  expect(resetEventId(history.events, message)).toBe(939);
  expect(resetEventId(history.events, 'some other failure')).toBeUndefined();
});
