import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { closeAll, env, spawn, startRun, task } from '../support/team';

afterAll(closeAll);

let run: Awaited<ReturnType<typeof startRun>>;
let token: string;

beforeAll(async () => {
  run = await startRun();
  token = run.root.token;
});

interface Raw {
  status: number;
  contentType: string;
  text: string;
}

/** Every body the gateway sends back in this file passes through here. */
function expectClean(res: Raw): void {
  expect(res.text).not.toMatch(/^\s*at /m);
  expect(res.text).not.toMatch(/\bat .+:\d+:\d+/);
  expect(res.text).not.toMatch(/\.(ts|js):\d+/);
  expect(res.text).not.toContain('Error:');
  expect(res.text).not.toContain(token);
  expect(res.text).not.toContain(env.operatorToken);
  expect(res.text).not.toContain(env.tokenSecret);
}

async function raw(method: string, path: string, init: { auth?: string | null; body?: string | Buffer; contentType?: string } = {}): Promise<Raw> {
  const auth = init.auth === undefined ? token : init.auth;
  const res = await fetch(`${env.gatewayUrl}${path}`, {
    method,
    headers: {
      accept: 'application/json, text/event-stream',
      ...(init.contentType ? { 'content-type': init.contentType } : {}),
      ...(auth ? { authorization: `Bearer ${auth}` } : {}),
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  const out = { status: res.status, contentType: res.headers.get('content-type') ?? '', text: await res.text() };
  expectClean(out);
  return out;
}

function jsonRpcError(res: Raw, checkContentType = true): { code: number; message: string } {
  if (checkContentType) expect(res.contentType).toMatch(/application\/json/);
  const body = JSON.parse(res.text);
  expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: expect.any(String) } });
  return body.error;
}

describe('POST /mcp/beidou at the HTTP level', () => {
  it.each(['{"jsonrpc": "2.0", "id": 1, "method": ', 'not json at all', '{"a":1}}', '\u0000\u0001'])(
    'answers the non-JSON body %j with 400 and a JSON-RPC parse error',
    async (body) => {
      const res = await raw('POST', '/mcp/beidou', { body, contentType: 'application/json' });
      expect(res.status).toBe(400);
      expect(jsonRpcError(res).code).toBe(-32700);
    },
  );

  it('answers a body over 2 MB with 413 and a JSON-RPC error', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(2 * 1024 * 1024 + 10) } });
    const res = await raw('POST', '/mcp/beidou', { body: huge, contentType: 'application/json' });
    expect(res.status).toBe(413);
    jsonRpcError(res);
  });

  it.each(['GET', 'DELETE', 'PUT', 'PATCH'])('answers %s with 405 and Allow: POST', async (method) => {
    const res = await fetch(`${env.gatewayUrl}/mcp/beidou`, { method, headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    expectClean({ status: res.status, contentType: res.headers.get('content-type') ?? '', text });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(JSON.parse(text)).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
  });

  it.each([{ hello: 'world' }, [], [{ jsonrpc: '1.0', method: 'x' }]])(
    'answers JSON that is not a JSON-RPC 2.0 message (%j) with 400 Invalid Request and nothing more',
    async (body) => {
      const res = await raw('POST', '/mcp/beidou', { body: JSON.stringify(body), contentType: 'application/json' });
      expect(res.status).toBe(400);
      expect(jsonRpcError(res).code).toBe(-32600);
      expect(res.text.length).toBeLessThan(200);
    },
  );
});

describe('MCP over the official client', () => {
  it('answers an unknown tool with a protocol error, not a tool result', async () => {
    const call = run.root.mcp.callTool({ name: 'no_such_tool', arguments: {} });
    await expect(call).rejects.toBeInstanceOf(McpError);
    const err = (await call.catch((e: unknown) => e)) as McpError;
    expect(err.code).toBe(ErrorCode.InvalidParams);
    expect(err.message).toContain('no_such_tool');
    expect(err.message).not.toMatch(/^\s*at /m);
  });

  it('truncates an absurd tool name in the error it echoes', async () => {
    const name = `x${'y'.repeat(5000)}`;
    const err = (await run.root.mcp.callTool({ name, arguments: {} }).catch((e: unknown) => e)) as McpError;
    expect(err).toBeInstanceOf(McpError);
    expect(err.message.length).toBeLessThan(400);
  });
});

describe('send_message content limit (256 KiB)', () => {
  const LIMIT = 256 * 1024;

  async function pair() {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    return { root, child: await spawn(root, runId, 'a') };
  }

  it('refuses content one byte over with invalid_input naming content, and the inbox stays as it was', async () => {
    const { root, child } = await pair();
    const before = await child.client.inbox(0, 0);
    const out = await root.call('send_message', { to: child.agentId, content: 'x'.repeat(LIMIT + 1) });
    expect(out.isError).toBe(true);
    expect(out.error).toMatchObject({ code: 'invalid_input', field: 'content' });
    expect(out.text).not.toContain('xxxxxxxxxx');
    expectClean({ status: 200, contentType: '', text: out.text });
    expect(await child.client.inbox(0, 0)).toEqual(before);
  });

  it('counts bytes, not characters', async () => {
    const { root, child } = await pair();
    // 2-byte characters: under the limit in length, over it in UTF-8 bytes.
    const error = await root.fail('send_message', { to: child.agentId, content: 'é'.repeat(LIMIT / 2 + 1) });
    expect(error).toMatchObject({ code: 'invalid_input', field: 'content' });
    expect((await child.client.inbox(0, 0)).messages).toEqual([]);
  });

  it('accepts content of exactly the limit', async () => {
    const { root, child } = await pair();
    const sent = await root.ok('send_message', { to: child.agentId, content: 'x'.repeat(LIMIT) });
    const inbox = await child.client.inbox(0, 0);
    expect(inbox.messages.map((m) => [m.message_id, m.content.length])).toEqual([[sent.message_id, LIMIT]]);
  });
});

describe('other paths', () => {
  it.each([
    ['GET', '/nope', null],
    ['POST', '/mcp/other', null],
    ['GET', '/mcp', null],
    ['GET', '/api/nope', 'operator'],
  ] as const)('%s %s is a 404 JSON body', async (method, path, who) => {
    const auth = who === 'operator' ? env.operatorToken : null;
    const res = await raw(method, path, { auth });
    expect(res.status).toBe(404);
    expect(res.contentType).toMatch(/application\/json/);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });

  it('answers a malformed operator body with 400 JSON, without echoing it', async () => {
    const res = await raw('POST', '/api/runs', { auth: env.operatorToken, body: '{"task": ', contentType: 'application/json' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'invalid_json', message: expect.any(String) } });
  });

  it('answers an oversized operator body with 413 JSON', async () => {
    const body = JSON.stringify({ task: 'x'.repeat(2 * 1024 * 1024 + 10) });
    const res = await raw('POST', '/api/runs', { auth: env.operatorToken, body, contentType: 'application/json' });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
  });

  it('answers a bad inbox query with 400 invalid_input naming the field', async () => {
    const res = await raw('GET', '/api/runtime/inbox?cursor=-1&wait_ms=0');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error).toMatchObject({ code: 'invalid_input', field: 'cursor' });
  });
});

describe('tool arguments no schema should see', () => {
  const call = async (path: string, name: string, args: string, as = token) => {
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
    const res = await raw('POST', path, { body, contentType: 'application/json', auth: as });
    expect([res.status, res.contentType]).toEqual([200, expect.stringMatching(/application\/json/)]);
    const { result } = JSON.parse(res.text);
    expect(result.isError).toBe(true);
    return JSON.parse(result.content[0].text);
  };

  it.each(['null', '[]', '"list everything"', '5'])('arguments %s: the surface\'s invalid-input refusal naming arguments, not a protocol dump', async (args) => {
    expect((await call('/mcp/beidou', 'list_peers', args)).error).toMatchObject({ code: 'invalid_input', field: 'arguments' });
    expect((await call('/mcp/agentteam', 'task_list', args)).error).toMatchObject({ code: 'invalid_input', field_errors: { arguments: expect.any(String) } });
    const isphere = await call('/mcp/isphere', 'isphere_search_contacts', args);
    expect(isphere).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(JSON.stringify(isphere)).not.toMatch(/expected|received|invalid_type/i);
  });

  it('refuses a __proto__ key, at the top or nested, naming it, before the strict schema lets it through', async () => {
    expect((await call('/mcp/beidou', 'list_peers', '{"__proto__":{"admin":true}}')).error).toMatchObject({ code: 'invalid_input', field: '__proto__' });
    const nested = await call('/mcp/beidou', 'declare_plan', '{"tasks":[{"id":"a","role":"r","skill":"worker","task":"t","depends_on":[],"__proto__":{"x":1}}]}');
    expect(nested.error).toMatchObject({ code: 'invalid_input', field: 'tasks[0].__proto__' });
    // Nothing was declared.
    expect((await call('/mcp/beidou', 'spawn_agent', '{"task_id":"a"}')).error.code).not.toBe('invalid_input');
  });

  it('refuses text that is not valid Unicode (a lone surrogate) as invalid input naming the field, never an internal error', async () => {
    const isphere = await call('/mcp/isphere', 'isphere_receive_messages', '{"conversation_id":"conv_\\ud800x"}');
    expect(isphere).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENT' } });
    expect(JSON.stringify(isphere)).toContain('conversation_id');
    expect((await call('/mcp/beidou', 'send_message', `{"to":"${run.rootId}","content":"half a pair \\udc00"}`)).error).toMatchObject({ code: 'invalid_input', field: 'content' });
  });
});
