import type { Rate } from '../config';

interface Bucket {
  tokens: number;
  at: number;
}

/** How often idle buckets are forgotten. */
const SWEEP_MS = 60_000;

/**
 * Token buckets, one per key (an agent, or the operator), in this replica's
 * memory: a caller gets `burst` requests at once and `perSecond` after that.
 * Replicas do not share buckets, so N replicas allow N times the rate; the
 * point is that one caller cannot starve the others on a replica, not an
 * exact quota.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private sweptAt = Date.now();

  constructor(private readonly rate: Rate) {}

  /** 0 when the request may go ahead (and is counted), else the ms until one token is back. */
  take(key: string, now = Date.now()): number {
    const { perSecond, burst } = this.rate;
    if (perSecond <= 0) return 0;
    this.sweep(now);
    const bucket = this.buckets.get(key) ?? { tokens: burst, at: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.at) * perSecond) / 1000);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - bucket.tokens) * 1000) / perSecond);
  }

  /** A bucket idle long enough to be full again is the same as none: dropping it keeps idle agents free. */
  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_MS) return;
    this.sweptAt = now;
    const refill = (this.rate.burst * 1000) / this.rate.perSecond;
    for (const [key, bucket] of this.buckets) if (now - bucket.at >= refill) this.buckets.delete(key);
  }
}
