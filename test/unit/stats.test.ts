import fc from 'fast-check';
import { median, percentile, summarize } from '../../bench/stats';

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('bench statistics', () => {
  it.each([
    [[5], 5],
    [[1, 3], 2],
    [[1, 2, 9], 2],
    [[1, 2, 3, 100], 2.5],
  ])('the median of %j is %d', (sorted, expected) => {
    expect(median(sorted)).toBe(expected);
  });

  it.each([
    [99, 100, 99],
    [99, 300, 297],
    [99, 1000, 990],
    [99, 50, 50],
    [50, 10, 5],
    [99, 1, 1],
  ])('p%d of the samples 1..%d is the measured sample %d (nearest rank)', (p, n, expected) => {
    expect(percentile(range(n), p)).toBe(expected);
  });

  it('summarizes unsorted samples without reordering them', () => {
    const samples = [30, 10, 20, 40];
    expect(summarize(samples)).toEqual({ count: 4, median: 25, p99: 40, mean: 25 });
    expect(samples).toEqual([30, 10, 20, 40]);
  });

  it('gives NaN figures for no samples, so a failed scenario shows dashes rather than zeros', () => {
    expect(summarize([])).toEqual({ count: 0, median: NaN, p99: NaN, mean: NaN });
  });

  it('keeps median <= p99 <= max and min <= mean <= max', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 500 }), (xs) => {
        const s = summarize(xs);
        const min = Math.min(...xs);
        const max = Math.max(...xs);
        expect(s.median).toBeLessThanOrEqual(s.p99);
        expect(s.p99).toBeLessThanOrEqual(max);
        expect(s.mean).toBeGreaterThanOrEqual(min - 1e-6);
        expect(s.mean).toBeLessThanOrEqual(max + 1e-6);
      }),
    );
  });
});
