/** Figures of one scenario's samples, in the samples' unit (milliseconds in the bench). */
export interface Summary {
  count: number;
  median: number;
  p99: number;
  mean: number;
}

/**
 * Nearest-rank percentile of an ascending array: the smallest sample with
 * at least p% of the samples at or below it. It is always a value that was
 * measured, and with under 100 samples p99 is simply the maximum.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p * sorted.length) / 100);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The median is the midpoint of the two middle samples when their number is even. */
export function median(sorted: readonly number[]): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** No samples gives NaN figures, which the report shows as a dash. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? NaN : sorted.reduce((sum, x) => sum + x, 0) / sorted.length;
  return { count: sorted.length, median: median(sorted), p99: percentile(sorted, 99), mean };
}
