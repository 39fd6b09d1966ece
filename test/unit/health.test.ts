import { healthOf } from '../../workflows/agent/health';
import { freshData, type AgentData } from '../../workflows/agent/state';
import type { AgentStatus, ChildRecord } from '../../workflows/types';

const launch = { first_message: 'x' } as never;
const agent = (change: (d: AgentData) => void, status: AgentStatus = 'active', leaderId: string | null = 'ag_lead') => {
  const data = freshData(launch);
  data.launch_gen = 1;
  data.launched_at = 1_000;
  change(data);
  return healthOf({ id: { leaderId } as never, status, data });
};
const child = (id: string, more: Partial<ChildRecord> = {}): ChildRecord => ({
  agent_id: id,
  name: id,
  role: 'r',
  skill: 's',
  team_id: 't',
  status: 'active',
  review_pending: false,
  review_pending_ts: null,
  summary: '',
  termination_requested: false,
  terminate_posted: false,
  ...more,
});
const watch = (more: Partial<NonNullable<AgentData['watch']>>) => ({ last_activity: 5_000, idle_strikes: 0, idle_struck_at: null, eligible_since: null, reviews: {}, asking: [], ...more });

describe("an agent's health, from its own state", () => {
  it('names what it waits on, and since when', () => {
    expect(agent(() => undefined)).toMatchObject({ state: 'working', waiting_on: null, since: 1_000, line: 'Working.' });
    expect(agent((d) => (d.launch_gen = 0))).toMatchObject({ state: 'waiting', waiting_on: { kind: 'runtime', for: 'start' } });
    expect(agent((d) => (d.review = { pending: true, ts: 7_000, detail: 'x' }), 'review_pending')).toMatchObject({
      state: 'waiting',
      waiting_on: { kind: 'leader', for: 'review', id: 'ag_lead' },
      since: 7_000,
      line: 'Waiting for its leader ag_lead to review its work.',
    });
    // The root's leader is the person.
    expect(agent((d) => (d.review = { pending: true, ts: 7_000, detail: 'x' }), 'review_pending', null).line).toBe('Waiting for the person to review its work.');
    expect(agent((d) => (d.watch = watch({ asking: ['q_1'] })))).toMatchObject({ state: 'waiting', waiting_on: { kind: 'question', ids: ['q_1'] } });
    expect(agent((d) => (d.children = { a: child('a'), b: child('b', { status: 'terminated' }) }))).toMatchObject({ state: 'waiting', waiting_on: { kind: 'children', ids: ['a'] } });
    expect(agent((d) => (d.terminate = { posted: true, posted_at: 9_000, consumed: false }), 'terminating')).toMatchObject({ waiting_on: { kind: 'runtime', for: 'terminate' }, since: 9_000 });
  });

  it('puts what needs someone first: a review it owes, a stall, a stop', () => {
    // Children waiting for its review outrank its own wait on them, oldest first.
    const owes = agent((d) => (d.children = { a: child('a', { review_pending: true, review_pending_ts: 8_000 }), b: child('b', { review_pending: true, review_pending_ts: 6_000 }) }));
    expect(owes).toMatchObject({ state: 'owes', waiting_on: { kind: 'review_of', ids: ['b', 'a'] }, since: 6_000 });
    expect(agent((d) => (d.watch = watch({ idle_strikes: 3 })))).toMatchObject({ state: 'stalled', since: 5_000 });
    // Two strikes are reminders, not yet a stall.
    expect(agent((d) => (d.watch = watch({ idle_strikes: 2 }))).state).toBe('working');
    const crashed = agent((d) => Object.assign(d, { crashed_out: true, crashes: 3, stopped_at: 11_000 }), 'active', null);
    expect(crashed).toMatchObject({ state: 'stopped', waiting_on: { kind: 'decision', why: 'crashed' }, since: 11_000 });
    expect(crashed.line).toBe('Crashed 3 times; not restarted. Waiting for the person to decide.');
    expect(agent((d) => (d.halted = { reason: 'budget', down: true }))).toMatchObject({ state: 'stopped', waiting_on: { why: 'budget' } });
    expect(agent((d) => (d.crashed_out = true), 'terminated')).toMatchObject({ state: 'ended' });
  });
});
