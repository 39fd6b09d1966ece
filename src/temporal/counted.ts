import type { ProcessMetrics } from '../metrics/temporalCalls';

/** The operations of this module, each counted under its own name (calls and failures). */
export type Operation =
  | 'start'
  | 'execute'
  | 'signalWithStart'
  | 'updateWithStart'
  | 'query'
  | 'update'
  | 'startUpdate'
  | 'signal'
  | 'describe'
  | 'result'
  | 'terminate'
  | 'cancel'
  | 'fetchHistory'
  | 'list'
  | 'listPage'
  | 'count'
  | 'historyReverse'
  | 'reset';

export interface Counted {
  <T>(op: Operation, fn: () => Promise<T>): Promise<T>;
  /** A failure of a call already counted (a later page of a list). */
  failed(op: Operation): void;
}

/** Counts each call of an operation and each that fails; without metrics (the CLI), only runs it. */
export function counter(metrics: ProcessMetrics | undefined): Counted {
  const failed = (op: Operation) => metrics?.operationFailures.inc({ operation: op });
  const run = async <T>(op: Operation, fn: () => Promise<T>): Promise<T> => {
    metrics?.operations.inc({ operation: op });
    try {
      return await fn();
    } catch (err) {
      failed(op);
      throw err;
    }
  };
  return Object.assign(run, { failed });
}

/** An iteration counted as one call of `op`, failed if any page fails; `bound` wraps the fetch of each page. */
export async function* countedIteration<T>(
  counted: Counted,
  op: Operation,
  items: AsyncIterable<T>,
  bound: (page: () => Promise<IteratorResult<T>>) => Promise<IteratorResult<T>> = (page) => page(),
): AsyncGenerator<T> {
  const it = items[Symbol.asyncIterator]();
  let first = true;
  for (;;) {
    const next = first
      ? await counted(op, () => bound(() => it.next()))
      : await bound(() => it.next()).catch((err: unknown) => {
          counted.failed(op);
          throw err;
        });
    first = false;
    if (next.done) return;
    yield next.value;
  }
}
