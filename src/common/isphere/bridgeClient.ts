import type { BridgeAccount, BridgeContact, BridgeConversation, BridgeFile, BridgeGroup, BridgeMessage, BridgePage, SendReceipt } from './bridgeRecords';
import { ConnectorError, SendOutcomeUnknown } from './errors';

export interface BridgeOptions {
  baseUrl: string;
  /** The bridge token from configuration; sent as a header, never logged or echoed. */
  token: string;
  timeoutMs: number;
}

type Query = Record<string, string | number | boolean | undefined | null>;

/**
 * The HTTP client of the iSphere bridge protocol (docs/isphere-bridge.md).
 * Every failure comes back in the tools contract's codes; a send whose
 * answer was lost is `SendOutcomeUnknown`, for the caller to reconcile.
 */
export class BridgeClient {
  constructor(private readonly opts: BridgeOptions) {}

  status(): Promise<{ logged_in: boolean; account: BridgeAccount | null }> {
    return this.json('GET', '/v1/status');
  }

  contacts(q: { query?: string; include_inactive?: boolean; limit?: number; cursor?: string }): Promise<BridgePage<BridgeContact>> {
    return this.json('GET', '/v1/contacts', q);
  }

  groups(q: { query?: string; include_archived?: boolean; limit?: number; cursor?: string }): Promise<BridgePage<BridgeGroup>> {
    return this.json('GET', '/v1/groups', q);
  }

  contact(id: string): Promise<BridgeContact> {
    return this.json('GET', `/v1/contacts/${encodeURIComponent(id)}`);
  }

  group(id: string): Promise<BridgeGroup> {
    return this.json('GET', `/v1/groups/${encodeURIComponent(id)}`);
  }

  conversation(id: string): Promise<BridgeConversation> {
    return this.json('GET', `/v1/conversations/${encodeURIComponent(id)}`);
  }

  conversations(q: { query?: string; conversation_type?: string; limit?: number; cursor?: string }): Promise<BridgePage<BridgeConversation>> {
    return this.json('GET', '/v1/conversations', q);
  }

  messages(conversationId: string, q: { since?: string; limit?: number; cursor?: string }): Promise<BridgePage<BridgeMessage> & { conversation: BridgeConversation }> {
    return this.json('GET', `/v1/conversations/${encodeURIComponent(conversationId)}/messages`, q);
  }

  files(q: { conversation_id?: string; message_id?: string; limit?: number; cursor?: string }): Promise<BridgePage<BridgeFile>> {
    return this.json('GET', '/v1/files', q);
  }

  /** A file's bytes and the bridge's sha256 of them. */
  async fileContent(fileId: string, maxBytes: number): Promise<{ bytes: Buffer; sha256: string | null }> {
    const res = await this.send('GET', `/v1/files/${encodeURIComponent(fileId)}/content`);
    if (!res.ok) throw await failure(res);
    const length = Number(res.headers.get('content-length') ?? 0);
    if (length > maxBytes) throw new ConnectorError('PERMISSION_DENIED', `The file is ${length} bytes, over the ${maxBytes}-byte download limit.`);
    const bytes = Buffer.from(await res.arrayBuffer());
    if (bytes.length > maxBytes) throw new ConnectorError('PERMISSION_DENIED', `The file is over the ${maxBytes}-byte download limit.`);
    return { bytes, sha256: res.headers.get('x-sha256') };
  }

  sendMessage(body: { client_message_id: string; target_type: string; target_id: string; content_text: string }): Promise<SendReceipt> {
    return this.sendOnce('/v1/messages', body);
  }

  sendFile(body: { client_message_id: string; target_type: string; target_id: string; file_name: string; content_base64: string; caption?: string }): Promise<SendReceipt> {
    return this.sendOnce('/v1/files', body);
  }

  /** What the bridge accepted under this client message id, or null when it accepted nothing. */
  async lookupSend(clientMessageId: string): Promise<SendReceipt | null> {
    const res = await this.send('GET', `/v1/sends/${encodeURIComponent(clientMessageId)}`);
    if (res.status === 404) return null;
    if (!res.ok) throw await failure(res);
    return (await res.json()) as SendReceipt;
  }

  private async sendOnce(path: string, body: { client_message_id: string }): Promise<SendReceipt> {
    let res: Response;
    try {
      res = await this.send('POST', path, undefined, body);
    } catch (err) {
      // Refused before anything left: nothing was sent. Anything else: it may have been.
      if (err instanceof ConnectorError && err.code === 'SOURCE_UNAVAILABLE') throw err;
      throw new SendOutcomeUnknown(body.client_message_id);
    }
    if (!res.ok) throw await failure(res);
    try {
      return (await res.json()) as SendReceipt;
    } catch {
      throw new SendOutcomeUnknown(body.client_message_id);
    }
  }

  private async json<T>(method: string, path: string, query?: Query): Promise<T> {
    const res = await this.send(method, path, query);
    if (!res.ok) throw await failure(res);
    try {
      return (await res.json()) as T;
    } catch {
      throw new ConnectorError('CONNECTOR_FAILED', 'The bridge answered something that is not JSON.', true);
    }
  }

  private async send(method: string, path: string, query?: Query, body?: unknown): Promise<Response> {
    const qs = query ? Object.entries(query).filter(([, v]) => v !== undefined && v !== null) : [];
    const url = `${this.opts.baseUrl}${path}${qs.length ? `?${new URLSearchParams(qs.map(([k, v]): [string, string] => [k, String(v)]))}` : ''}`;
    try {
      return await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.opts.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw new ConnectorError('TIMEOUT', `The bridge did not answer within ${this.opts.timeoutMs} ms.`, true);
      const code = (err as { cause?: { code?: string } }).cause?.code;
      if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') throw new ConnectorError('SOURCE_UNAVAILABLE', 'The iSphere bridge is not reachable.', true);
      throw new ConnectorError('CONNECTOR_FAILED', 'The connection to the iSphere bridge failed.', true);
    }
  }
}

/** A bridge refusal in the contract's codes; the bridge's own code is kept in details, its words are not trusted to be safe. */
async function failure(res: Response): Promise<ConnectorError> {
  const body = (await res.json().catch(() => null)) as { error?: { code?: unknown } } | null;
  const code = typeof body?.error?.code === 'string' ? body.error.code : `http_${res.status}`;
  const details = { bridge_code: code.slice(0, 64) };
  if (code === 'not_logged_in') return new ConnectorError('NOT_LOGGED_IN', 'No one is logged in to the iSphere client; a person must log in by hand.', false, details);
  if (code === 'target_unavailable') return new ConnectorError('TARGET_NOT_FOUND', 'The contact is inactive or the group archived; it cannot receive.', false, details);
  if (code === 'file_too_large') return new ConnectorError('INVALID_ARGUMENT', 'The file is larger than the bridge accepts.', false, details);
  if (res.status === 401) return new ConnectorError('CONNECTOR_FAILED', 'The bridge refused Dipper\'s bridge token; an operator must check DIPPER_ISPHERE_BRIDGE_TOKEN.', false, details);
  if (res.status === 404) return new ConnectorError('TARGET_NOT_FOUND', 'The bridge found no such contact, group, conversation, message or file.', false, details);
  if (res.status === 403) return new ConnectorError('PERMISSION_DENIED', 'The bridge refused access to this object.', false, details);
  if (res.status === 400) return new ConnectorError('INVALID_ARGUMENT', 'The bridge refused the request as invalid.', false, details);
  // The bridge is up but cannot reach the client right now: the source is unavailable, and auto may try another.
  if (res.status === 503) return new ConnectorError('SOURCE_UNAVAILABLE', 'The iSphere bridge cannot reach the client right now.', true, details);
  if (res.status >= 500) return new ConnectorError('CONNECTOR_FAILED', 'The bridge failed to answer.', true, details);
  return new ConnectorError('CONNECTOR_FAILED', `The bridge refused the request (${code.slice(0, 64)}).`, false, details);
}
