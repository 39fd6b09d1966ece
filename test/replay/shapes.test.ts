import {
  countOf,
  patchIds,
  recordedSet,
  scheduledActivities,
  signalsSent,
  taskOfEvent,
  updateWindows,
  workflowType,
  type HistoryEvent,
} from '../support/historyShape';

/**
 * The shape of the round trips that issue 40 took out, read from the
 * recorded set (`npm run record-histories`): a change that brings one back
 * changes what these histories hold, and fails here. docs/performance.md
 * has what each cost; docs/decisions.md, "Members started by the spawn's
 * step" and "Questions", why each is safe.
 */
const histories = [...recordedSet().values()];
const questions = histories.filter((events) => workflowType(events) === 'questionWorkflow');

/** The workflow task that sent the first signal of this name. */
function taskOfSignal(events: HistoryEvent[], name: string): number | undefined {
  const sent = events.find((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === name);
  return sent ? taskOfEvent(events, sent) : undefined;
}

/** Workflow tasks completed from the spawn step's end to the Update's completion (the window's end). */
function tasksAfterStep(window: HistoryEvent[]): number {
  const scheduled = window.find((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'prepareSpawn');
  const step = window.findIndex((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId === scheduled?.eventId);
  expect(step).toBeGreaterThanOrEqual(0);
  return countOf(window.slice(step), 'WORKFLOW_TASK_COMPLETED');
}

/** The names of the inbox items a question sent its holders, in order. */
const itemsSent = (events: HistoryEvent[]): string[] =>
  events.flatMap((e) => {
    const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (sent?.signalName !== 'systemMessage') return [];
    return [JSON.parse(Buffer.from(sent.input.payloads[0].data, 'base64').toString('utf8')).message_id as string];
  });

const payloadOf = (input: { payloads: { data: string }[] }) => JSON.parse(Buffer.from(input.payloads[0].data, 'base64').toString('utf8'));

const inputOf = (events: HistoryEvent[]) => JSON.parse(Buffer.from(events[0].workflowExecutionStartedEventAttributes.input.payloads[0].data, 'base64').toString('utf8'));

it("records no pre-release patch: only the first task's mark, which is a command of its own", () => {
  // The SDK records markers of its own (`__sdk_internal_patch_number:N`) for fixes to its own behaviour.
  const ours = histories.flatMap(patchIds).filter((id) => !id.startsWith('__sdk_internal'));
  expect(new Set(ours)).toEqual(new Set(['dipper-first-task-command']));
});

it('create_team starts its members in its one step, and answers in the task that hears it return', () => {
  const spawns = histories.flatMap((events) => updateWindows(events)).filter((u) => u.name === 'createTeam');
  expect(spawns.length).toBeGreaterThan(0);
  for (const { window } of spawns) {
    // Events are written beside the call by their own activity (workflows/events.ts), whenever a batch is due.
    expect({
      steps: scheduledActivities(window).filter((name) => name !== 'recordEvents'),
      childStarts: countOf(window, 'START_CHILD_WORKFLOW_EXECUTION_INITIATED'),
      tasksAfterStep: tasksAfterStep(window),
    }).toEqual({ steps: ['prepareSpawn'], childStarts: 0, tasksAfterStep: 1 });
  }
});

it('spawn_agent answers in the task that accepts it, and its step tells the leader its member runs before it returns', () => {
  const agents = histories.filter((events) => workflowType(events) === 'agentWorkflow');
  const spawns = agents.flatMap((events) => updateWindows(events)).filter((u) => u.name === 'spawnAgent');
  expect(spawns.length).toBeGreaterThan(0);
  for (const { window } of spawns) expect(countOf(window, 'WORKFLOW_TASK_COMPLETED')).toBe(0);
  let told = 0;
  for (const events of agents) {
    for (const scheduled of events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'prepareSpawn')) {
      const key = payloadOf(scheduled.activityTaskScheduledEventAttributes.input).announce?.key as string | undefined;
      const completed = events.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId === scheduled.eventId);
      // create_team's steps announce nothing; a spawn's step that failed (refused past the run's limit) tells no one.
      if (key === undefined || !completed) continue;
      const word = events.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'spawnStarted' && payloadOf(e.workflowExecutionSignaledEventAttributes.input).key === key);
      expect(Number(word?.eventId)).toBeLessThan(Number(completed.eventId));
      told++;
    }
  }
  expect(told).toBeGreaterThan(0);
});

it('a leader continues as new only once its spawns\' steps have ended', () => {
  const continued = histories.filter((events) => countOf(events, 'WORKFLOW_EXECUTION_CONTINUED_AS_NEW') > 0 && scheduledActivities(events).includes('prepareSpawn'));
  expect(continued.length).toBeGreaterThan(0);
  for (const events of continued) {
    const steps = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'prepareSpawn');
    const ended = (step: HistoryEvent) =>
      events.some((e) => [e.activityTaskCompletedEventAttributes, e.activityTaskFailedEventAttributes].some((a) => a?.scheduledEventId === step.eventId));
    expect(steps.filter((step) => !ended(step)).map((step) => step.eventId)).toEqual([]);
  }
});

it('a question tells its first agent holder in its first workflow task, beside the run', () => {
  // ask_user's questions (they tell their asker) whose first holder is an agent (the people's are announced instead).
  const toAgents = questions.filter((events) => signalsSent(events).includes('asking') && !scheduledActivities(events).includes('announce'));
  expect(toAgents.length).toBeGreaterThan(0);
  for (const events of toAgents) {
    // A long question goes to the holder as a reference: the routing starts with keeping its words, in that task.
    const kept = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType.name === 'keepTexts');
    expect({ opened: taskOfSignal(events, 'questionOpened'), routedIn: kept ? taskOfEvent(events, kept) : taskOfSignal(events, 'systemMessage') }).toEqual({
      opened: 1,
      routedIn: 1,
    });
  }
});

it("a question names its inbox items after its own asking, so the same words asked again reach the holder again", () => {
  const toAgents = questions.filter((events) => itemsSent(events).some((id) => !id.endsWith('-answer')));
  expect(toAgents.length).toBeGreaterThan(0);
  for (const events of toAgents) {
    const runEnd = String(events[0].workflowExecutionStartedEventAttributes.firstExecutionRunId).slice(-12);
    for (const id of itemsSent(events).filter((i) => !i.endsWith('-answer'))) expect(id).toMatch(new RegExp(`^${inputOf(events).qid}-${runEnd}-\\d+$`));
  }
});
