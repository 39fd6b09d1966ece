import { Rng } from '../../src/soak/rng';
import { victims } from '../../src/soak/soak';

const count = (all: string[]) => Object.fromEntries(['worker', 'gateway', 'temporal'].map((v) => [v, all.filter((x) => x === v).length]));

it('the matrix kills the gateway and the Temporal server as often as asked, among the worker kills, in an order the seed fixes', () => {
  const matrix = { kills: 9, matrix: { gateway: 2, temporal: 1 } };
  const orders = [1, 2, 3, 4, 5].map((seed) => victims(matrix, new Rng(seed)));
  for (const order of orders) expect(count(order)).toEqual({ worker: 6, gateway: 2, temporal: 1 });
  expect(victims(matrix, new Rng(3))).toEqual(orders[2]);
  // Seeds place them differently.
  expect(new Set(orders.map((o) => o.join())).size).toBeGreaterThan(1);
  // Without the matrix every kill is the worker's.
  expect(count(victims({ kills: 4 }, new Rng(1)))).toEqual({ worker: 4, gateway: 0, temporal: 0 });
});
