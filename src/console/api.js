/**
 * The operator API as the console calls it. The token lives in
 * sessionStorage (this tab only) and travels in the Authorization header;
 * the gateway sets no cookie and reads none, so another site's page can
 * make the browser send nothing that authenticates (no CSRF to guard).
 */

const KEY = 'dipper.operatorToken';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (value) => sessionStorage.setItem(KEY, value),
  clear: () => sessionStorage.removeItem(KEY),
};

/** An API refusal in the API's own words: its `error.code` and `error.message`. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let refused = () => undefined;

/** What to do when the gateway stops taking the signed-in token (revoked, or the gateway's token changed). */
export function whenRefused(handler) {
  refused = handler;
}

/** Calls `/api<path>`; `as` tries a token that is not stored yet (signing in). */
export async function api(path, { method = 'GET', body, as } = {}) {
  const bearer = as ?? token.get();
  const headers = { Accept: 'application/json' };
  if (bearer) headers.Authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(`/api${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'unreachable', 'The gateway could not be reached.');
  }
  const data = await res.json().catch(() => null);
  if (res.ok) return data;
  const error = data && data.error ? data.error : {};
  const failure = new ApiError(res.status, error.code || `http_${res.status}`, error.message || res.statusText || 'Request failed.');
  if (res.status === 401 && as === undefined) refused(failure);
  throw failure;
}

/** How the page shows a failure: the API's code, then its message. */
export function describe(err) {
  return err instanceof ApiError ? `${err.code}: ${err.message}` : String(err && err.message ? err.message : err);
}

/**
 * Runs `read` now and every `ms`, never two at once (a slow answer is not
 * overtaken by the next); a failure shows in `error` until a read succeeds.
 * Returns the stop.
 */
export function refreshEvery(ms, error, read) {
  let reading = false;
  const refresh = async () => {
    if (reading) return;
    reading = true;
    try {
      await read();
      error.hidden = true;
    } catch (err) {
      error.textContent = describe(err);
      error.hidden = false;
    } finally {
      reading = false;
    }
  };
  void refresh();
  const timer = setInterval(refresh, ms);
  return () => clearInterval(timer);
}
