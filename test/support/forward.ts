import type http from 'node:http';

/** A request's body, read whole (a test proxy decides what to do before it forwards). */
export async function bodyOf(req: http.IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? Buffer.concat(chunks) : undefined;
}

/** Sends the request on to `upstream` with the headers the Task API reads, and returns its answer. */
export function forward(upstream: string, req: http.IncomingMessage, body: Buffer | undefined): Promise<Response> {
  return fetch(`${upstream}${req.url ?? '/'}`, {
    method: req.method,
    headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => ['authorization', 'content-type'].includes(k)) as [string, string][]),
    body,
  });
}
