import { queryMayAnswerLater } from '../../src/temporal/errors';
import { QUERY_COLD, QUERY_REFUSED } from '../../src/common/pure/queryGuard';

/** A client error wrapping the gRPC one, as @temporalio/client throws it. */
const wrapped = (code: number) => Object.assign(new Error('Query failed'), { cause: Object.assign(new Error('grpc'), { code }) });

it('a Query is asked again after a cut, a deadline or an unreachable server, and after the workflow guard refused it', () => {
  for (const code of [1, 4, 14]) expect([code, queryMayAnswerLater(wrapped(code))]).toEqual([code, true]);
  expect(queryMayAnswerLater(new Error(`workflow said: ${QUERY_REFUSED}`))).toBe(true);
  expect(queryMayAnswerLater(new Error(`workflow said: ${QUERY_COLD}`))).toBe(true);
});

it('a failing workflow task, a bad argument or a missing workflow is not asked again', () => {
  for (const code of [3, 5, 9]) expect([code, queryMayAnswerLater(wrapped(code))]).toEqual([code, false]);
  expect(queryMayAnswerLater(new Error('Query failed'))).toBe(false);
  expect(queryMayAnswerLater(undefined)).toBe(false);
});
