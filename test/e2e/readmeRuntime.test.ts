import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/clients';
import { untilNothingRunning } from '../support/ended';
import { startStack, type Stack } from '../support/stack';
import { temporalForFile } from '../support/temporal';

const root = path.resolve(__dirname, '..', '..');

/** The README's example runtime, taken from the README as written (a relative command, run from the project). */
function readmeRuntimes(): string {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const found = [...readme.matchAll(/DIPPER_RUNTIMES='([^']+)'/g)].map((m) => m[1]).find((r) => r.includes('reference-runtime.js'));
  if (!found) throw new Error('the README no longer shows a reference-runtime example');
  return found;
}

const plan = {
  rework_first: true,
  tasks: [
    { id: 'a', role: 'first', skill: 'worker', task: 'Write a result.' },
    { id: 'b', role: 'second', skill: 'worker', task: 'Write a result.', depends_on: ['a'] },
  ],
};

let stack: Stack;
const temporal = temporalForFile();
beforeAll(async () => {
  stack = await startStack('readme', 28915, { DIPPER_RUNTIMES: readmeRuntimes() });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe("the README's reference runtime example", () => {
  it('runs a scripted team as written: members reworked once, the lead reworked by the person, the run completed', async () => {
    expect(JSON.parse(readmeRuntimes()).default.command[1]).toBe('bin/reference-runtime.js');
    const task = `Build it.\n\n\`\`\`dipper-plan\n${JSON.stringify(plan)}\n\`\`\``;
    const run = (await stack.operator.request('POST', '/runs', { task, root_skill: 'lead' })).json;
    const pending = async (kind: string) => ((await stack.operator.request('GET', `/runs/${run.run_id}`)).json.pending_root as { kind: string }[]).some((r) => r.kind === kind);
    await eventually(async () => ((await pending('review')) ? true : undefined), 90_000, 250);
    // Each member was sent back once (its leader's message acknowledges the review as rework) before it was approved.
    // (Events are written a moment after what they record.)
    await eventually(async () => ((await stack.operator.events(run.run_id, 'review.acknowledged')).length >= 2 ? true : undefined), 15_000, 250);
    expect((await stack.operator.events(run.run_id, 'review.acknowledged')).length).toBe(2);

    // The person sends the lead's report back: the lead looks again and reports again.
    const reports = async () => (await stack.operator.events(run.run_id, 'completion.reported')).filter((e) => e.agent_id === run.root.agent_id).length;
    const before = await reports();
    expect((await stack.operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'rework', text: 'Look again.' })).status).toBe(200);
    await eventually(async () => ((await reports()) > before && (await pending('review')) ? true : undefined), 60_000, 250);
    expect((await stack.operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'review', verdict: 'approve' })).status).toBe(200);
    await eventually(async () => ((await pending('termination')) ? true : undefined), 60_000, 250);
    expect((await stack.operator.request('POST', `/runs/${run.run_id}/root/decision`, { kind: 'termination', verdict: 'approve' })).status).toBe(200);
    await eventually(async () => ((await stack.operator.request('GET', `/runs/${run.run_id}`)).json.status === 'completed' ? true : undefined), 60_000, 250);
    // Every runtime process read its terminate item and exited: the ended run leaves nothing running.
    await untilNothingRunning(temporal.client, stack.env.DIPPER_DATA_DIR, run.run_id, 60_000);
  }, 240_000);
});
