import type { NextFunction, Request, Response } from 'express';

/**
 * A gateway being stopped (SIGTERM, SIGINT) drains instead of dropping
 * what it holds: its health check fails at once, so a load balancer sends
 * no more; a request that still arrives is answered 503 with Retry-After
 * (retryable, nothing done); the calls in flight are given until the
 * drain's end to answer. Then what is left (long polls, a question still
 * waiting for its person) is cut; those are asked again by their clients.
 */
export class Drain {
  private draining = false;
  private readonly stopping = new AbortController();
  /** Aborted when the drain starts: waits that can answer early (long polls) do. */
  readonly signal = this.stopping.signal;
  private inFlight = 0;
  private idle: (() => void)[] = [];

  get active(): boolean {
    return this.draining;
  }

  /** Counts requests in flight, and turns new ones away once draining. Health checks pass through. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      if (this.draining && req.path !== '/healthz') {
        res.status(503).set({ 'Retry-After': '1', Connection: 'close' }).json({ error: { code: 'unavailable', message: 'This gateway is stopping; call again (another replica answers).', retryable: true } });
        return;
      }
      this.inFlight++;
      let done = false;
      const leave = () => {
        if (done) return;
        done = true;
        this.inFlight--;
        if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
      };
      res.once('finish', leave);
      res.once('close', leave);
      next();
    };
  }

  /** Starts draining; resolves once nothing is in flight or `ms` have passed, saying how many were left. */
  async start(ms: number): Promise<number> {
    this.draining = true;
    this.stopping.abort();
    if (this.inFlight === 0) return 0;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.inFlight;
  }
}
