/**
 * Runs `work` over `items` with at most `limit` calls in flight and yields
 * the results in input order. A call starts only when a slot frees up, so a
 * slow consumer (the replayer) bounds how much is held in memory. `work`
 * must not reject: a rejection would surface at its turn, after the calls
 * ahead of it, with nothing to catch it in between.
 */
export async function* mapOrdered<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): AsyncGenerator<R> {
  const inFlight: Promise<R>[] = [];
  let next = 0;
  const fill = () => {
    while (next < items.length && inFlight.length < limit) inFlight.push(work(items[next++]));
  };
  fill();
  while (inFlight.length > 0) {
    const head = inFlight.shift()!;
    fill();
    yield await head;
  }
}
