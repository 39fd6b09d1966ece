/** About five minutes of outage at the longest waits before a runtime gives up. */
export const MAX_RETRIES = 60;
const RETRY_STATUSES = new Set([408, 429, 502, 503, 504]);

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Doubling from 250 ms, at most 5 s. */
export function backoffMs(attempt: number): number {
  return Math.min(5000, 250 * 2 ** Math.min(attempt, 5));
}

/**
 * A runtime API request with the agent's token. A lost connection, 408,
 * 429, 502-504, and a 500 that comes with Retry-After are tried again
 * (after Retry-After when given); nothing is lost meanwhile, since only
 * acknowledged items leave the inbox. Any other answer is final: a 409
 * superseded poll, a 401, a 500 needs_repair.
 */
export async function runtimeRequest<T>(token: string, method: string, url: string, body?: unknown, maxRetries = MAX_RETRIES): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      if (attempt >= maxRetries) throw err;
      await pause(backoffMs(attempt));
      continue;
    }
    if (res.ok) return (await res.json()) as T;
    const retryAfter = res.headers.get('retry-after');
    const retryable = RETRY_STATUSES.has(res.status) || (res.status === 500 && retryAfter !== null);
    if (!retryable || attempt >= maxRetries) throw new Error(`${method} ${url}: ${res.status}`);
    await pause(retryAfter !== null && Number.isFinite(Number(retryAfter)) ? Number(retryAfter) * 1000 : backoffMs(attempt));
  }
}
