import http2 from 'node:http2';
import zlib from 'node:zlib';
import type { AddressInfo } from 'node:net';

/** One gRPC call that went through the tap. Times are epoch milliseconds (fractional). */
export interface Rpc {
  /** Which process made it: the tap's name. */
  who: string;
  /** The method's last part, e.g. UpdateWorkflowExecution. */
  method: string;
  sentAt: number;
  /** When the response headers came back (undefined while it is open). */
  answeredAt?: number;
  /** When the stream closed (trailers). */
  endedAt?: number;
  /** grpc-status of the answer (0 is OK). */
  status?: string;
  /** Workflow ids and task queue names found in the request's bytes. */
  requestIds: string[];
  /** The same found in the response's bytes (a poll's task names its workflow there). */
  responseIds: string[];
  /** Words such as Update, Signal and activity names found in the bytes, when asked for (see `names`). */
  names: string[];
  requestBytes: number;
  responseBytes: number;
}

/** Dipper's workflow ids as they appear inside protobuf bytes; a task token carries its workflow's id too. */
const WORKFLOW_ID =
  /run\/run_[0-9a-f]{12}(?:\/agent\/ag_[0-9a-f]{12}(?:\/task\/[a-z_]+\/[0-9a-f-]{16,36})?|\/question\/q_[0-9a-f]{16}|\/approval\/[A-Za-z0-9_-]+)?|bench-(?:start|children|echo)-[0-9a-f-]{36}(?:-warm|\/child-\d{1,3})?/g;

/**
 * The messages of a gRPC body, each unpacked when its flag says it is
 * compressed (the worker's SDK core sends and accepts gzip).
 */
function messages(body: Buffer, encoding: string | undefined): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const compressed = body[at] === 1;
    const length = body.readUInt32BE(at + 1);
    const message = body.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    try {
      out.push(compressed && encoding === 'gzip' ? zlib.gunzipSync(message) : compressed && encoding === 'deflate' ? zlib.inflateSync(message) : message);
    } catch {
      out.push(message);
    }
  }
  return out;
}

function textOf(body: Buffer, encoding: string | undefined): string {
  return messages(body, encoding)
    .map((m) => m.toString('latin1'))
    .join('\n');
}

function idsIn(text: string): string[] {
  if (text.length === 0) return [];
  return [...new Set(text.match(WORKFLOW_ID) ?? [])];
}

/** Names found in the text, leaving out any that is part of a longer one found. */
function namesIn(text: string, names: string[]): string[] {
  const found = names.filter((n) => n.length >= 4 && text.includes(n));
  return found.filter((n) => !found.some((m) => m !== n && m.includes(n)));
}

/**
 * A transparent HTTP/2 (h2c) proxy in front of the Temporal frontend, in
 * the bench process only: the worker or the gateway is given its address
 * instead of the server's, and every RPC it makes is recorded with its
 * method, the moment it was sent and answered, and the workflow ids in its
 * bytes. Adds a fraction of a millisecond per call (two loopback hops);
 * the bench's figures are measured without it, only the tracer uses it.
 */
export class GrpcTap {
  readonly rpcs: Rpc[] = [];
  private server: http2.Http2Server | undefined;
  private upstream: http2.ClientHttp2Session | undefined;
  private readonly sessions = new Set<http2.ServerHttp2Session>();

  constructor(
    readonly who: string,
    private readonly target: string,
    /** Strings to look for in the request bytes (Update, Signal, activity names). */
    private readonly names: string[] = [],
  ) {}

  private session(): http2.ClientHttp2Session {
    if (!this.upstream || this.upstream.closed || this.upstream.destroyed) {
      this.upstream = http2.connect(`http://${this.target}`);
      this.upstream.on('error', () => undefined);
    }
    return this.upstream;
  }

  /** Listens on 127.0.0.1:port; returns the address to hand out. */
  async listen(port: number): Promise<string> {
    const server = http2.createServer({ maxSessionMemory: 64 });
    server.on('session', (s) => {
      this.sessions.add(s);
      s.on('close', () => this.sessions.delete(s));
      s.on('error', () => undefined);
    });
    server.on('stream', (stream, headers) => this.forward(stream, headers));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return `127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  private forward(down: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    const path = String(headers[':path'] ?? '');
    const rpc: Rpc = {
      who: this.who,
      method: path.slice(path.lastIndexOf('/') + 1),
      sentAt: performance.timeOrigin + performance.now(),
      requestIds: [],
      responseIds: [],
      names: [],
      requestBytes: 0,
      responseBytes: 0,
    };
    this.rpcs.push(rpc);
    const out: http2.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith(':') && k !== ':path' && k !== ':method') continue;
      out[k] = v;
    }
    let up: http2.ClientHttp2Stream;
    try {
      up = this.session().request(out);
    } catch {
      down.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14' }, { endStream: true });
      return;
    }
    const reqChunks: Buffer[] = [];
    const resChunks: Buffer[] = [];
    down.on('data', (c: Buffer) => {
      reqChunks.push(c);
      rpc.requestBytes += c.length;
    });
    down.pipe(up);
    down.on('end', () => {
      const text = textOf(Buffer.concat(reqChunks), headers['grpc-encoding'] as string | undefined);
      rpc.requestIds = idsIn(text);
      if (this.names.length > 0) rpc.names = namesIn(text, this.names);
    });
    down.on('error', () => up.close(http2.constants.NGHTTP2_CANCEL));
    down.on('close', () => {
      if (!up.closed) up.close(http2.constants.NGHTTP2_CANCEL);
    });
    up.on('error', () => {
      if (!down.closed) down.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    let trailers: http2.IncomingHttpHeaders | undefined;
    let responseEncoding: string | undefined;
    up.on('response', (h) => {
      responseEncoding = h['grpc-encoding'] as string | undefined;
      rpc.answeredAt = performance.timeOrigin + performance.now();
      const res: http2.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':') || k === ':status') res[k] = v;
      if (h['grpc-status'] !== undefined) rpc.status = String(h['grpc-status']);
      if (down.closed) return;
      // A trailers-only answer (an error) ends with its headers; otherwise trailers follow the data.
      if (h['grpc-status'] !== undefined) down.respond(res, { endStream: true });
      else down.respond(res, { waitForTrailers: true });
    });
    up.on('trailers', (t) => {
      trailers = t;
      if (t['grpc-status'] !== undefined) rpc.status = String(t['grpc-status']);
    });
    up.on('data', (c: Buffer) => {
      resChunks.push(c);
      rpc.responseBytes += c.length;
      if (!down.closed && !down.writableEnded) down.write(c);
    });
    down.on('wantTrailers', () => {
      const t: http2.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(trailers ?? {})) if (!k.startsWith(':')) t[k] = v;
      try {
        down.sendTrailers(t);
      } catch {
        // The caller went away.
      }
    });
    up.on('end', () => {
      rpc.endedAt = performance.timeOrigin + performance.now();
      rpc.responseIds = idsIn(textOf(Buffer.concat(resChunks), responseEncoding));
      if (!down.closed && !down.writableEnded) down.end();
    });
  }

  /** Forgets what was recorded (between traced calls). */
  clear(): void {
    this.rpcs.splice(0);
  }

  async close(): Promise<void> {
    for (const s of this.sessions) s.destroy();
    this.upstream?.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
