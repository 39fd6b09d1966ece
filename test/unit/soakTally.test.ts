import { newTally, tallySend, type SendAnswer } from '../../src/soak/team';

/** One message's attempts, in order, tallied as the soak tallies them. */
function attempts(...answers: SendAnswer[]) {
  const tally = newTally();
  const refusals: string[] = [];
  for (const a of answers) tallySend(tally, 'm1', refusals, a);
  return tally;
}
const refused = (code: string): SendAnswer => ({ kind: 'refused', code });
const delivered = (reused = false): SendAnswer => ({ kind: 'delivered', reused });

it('a refusal at the door after an attempt whose outcome was unknown stands for nothing: that attempt may have delivered', () => {
  expect(attempts(refused('outcome_unknown'), refused('rate_limited')).refused.size).toBe(0);
  expect(attempts({ kind: 'unknown' }, refused('rate_limited')).refused.size).toBe(0);
});

it('a refusal on its own stands, so a delivery of its message counts as an untrue answer', () => {
  expect([...attempts(refused('rate_limited')).refused]).toEqual([['m1', 'rate_limited']]);
  // A refusal made by the tool (past the door) after an unknown attempt stands too: a repeat with the key must find the first delivery.
  expect([...attempts(refused('outcome_unknown'), refused('inbox_full')).refused]).toEqual([['m1', 'inbox_full']]);
});

it('a repeat that finds the message delivered after only definite refusals is an untrue answer; after an unknown one it is not', () => {
  expect([...attempts(refused('rate_limited'), delivered(true)).reusedAfterRefusal]).toEqual([['m1', ['rate_limited']]]);
  expect(attempts(refused('outcome_unknown'), refused('rate_limited'), delivered(true)).reusedAfterRefusal.size).toBe(0);
  expect(attempts(refused('outcome_unknown'), delivered(true)).acknowledged.has('m1')).toBe(true);
});
