import { approve, closeAll, eventsOf, operator, spawn, startRun, task, waitForInbox } from '../support/team';

afterAll(closeAll);

async function rootAndChild(limits?: Record<string, number>) {
  const { root, runId, rootId } = await startRun(limits);
  await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
  const child = await spawn(root, runId, 'a');
  return { root, runId, rootId, child };
}

describe('send_message', () => {
  it("delivers to the recipient's inbox; the acknowledgement is the agent_input event with the same message_id", async () => {
    const { root, runId, rootId, child } = await rootAndChild();
    const sent = await child.client.ok('send_message', { to: rootId, content: 'hello leader' });
    expect(sent).toEqual({ delivered: true, message_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const inbox = await root.inbox(0, 0);
    const item = inbox.messages.find((m) => m.message_id === sent.message_id);
    expect(item).toMatchObject({ kind: 'message', from: child.agentId, content: 'hello leader' });

    const sendEvents = await eventsOf(runId, 'send_message');
    expect(sendEvents.find((e: any) => e.data.message_id === sent.message_id).agent_id).toBe(child.agentId);
    expect((await operator.events(runId, 'agent_input')).some((e: any) => e.data.message_id === sent.message_id)).toBe(false);

    await root.ack(item.seq);
    const input = await eventsOf(runId, 'agent_input');
    expect(input.find((e: any) => e.data.message_id === sent.message_id).agent_id).toBe(rootId);
    // Acknowledged items are never handed over again, whatever cursor the runtime sends.
    expect((await root.inbox(0, 0)).messages.some((m) => m.message_id === sent.message_id)).toBe(false);
    expect(await root.ack(item.seq)).toEqual({ acked_through: item.seq });
  });

  it('long-polls: a waiting runtime gets the message as soon as it is sent', async () => {
    const { root, rootId, child } = await rootAndChild();
    const start = (await child.client.inbox(0, 0)).next_cursor;
    const poll = child.client.inbox(start, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    await root.ok('send_message', { to: child.agentId, content: 'wake up' });
    const got = await poll;
    expect(got.messages.map((m) => [m.from, m.content])).toEqual([[rootId, 'wake up']]);
    expect(got.next_cursor).toBe(got.messages[0].seq);
  });

  it('with an idempotency_key, delivers once: a repeat answers the first message, other words under the key are refused', async () => {
    const { root, rootId, child } = await rootAndChild();
    const long = 'long words '.padEnd(3000, '.');
    const first = await child.client.ok('send_message', { to: rootId, content: long, idempotency_key: 'report-1' });
    expect(first).toEqual({ delivered: true, message_id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/), reused: false });
    // A repeat, and the key trimmed as the schema trims it: the same message.
    expect(await child.client.ok('send_message', { to: rootId, content: long, idempotency_key: 'report-1' })).toEqual({ ...first, reused: true });
    expect(await child.client.ok('send_message', { to: rootId, content: long, idempotency_key: ' report-1 ' })).toEqual({ ...first, reused: true });
    expect(await child.client.fail('send_message', { to: rootId, content: 'other words', idempotency_key: 'report-1' })).toMatchObject({
      code: 'idempotency_conflict',
      field: 'idempotency_key',
    });
    // The key is the sender's own for one recipient: another sender's, or another recipient, is a new message.
    const fromRoot = await root.ok('send_message', { to: child.agentId, content: 'hi', idempotency_key: 'report-1' });
    expect(fromRoot.message_id).not.toBe(first.message_id);
    expect(fromRoot.reused).toBe(false);
    const inbox = (await root.inbox(0, 0)).messages.filter((m) => m.from === child.agentId);
    expect(inbox.map((m) => [m.message_id, m.content])).toEqual([[first.message_id, long]]);
    for (const key of ['', '   ', 'k'.repeat(129)]) {
      expect(await child.client.fail('send_message', { to: rootId, content: 'x', idempotency_key: key })).toMatchObject({ code: 'invalid_input', field: 'idempotency_key' });
    }
  });

  it('refuses unknown recipients and recipients of another task', async () => {
    const { child } = await rootAndChild();
    expect(await child.client.fail('send_message', { to: 'ag_000000000000', content: 'x' })).toMatchObject({
      code: 'unknown_recipient',
      field: 'to',
    });
    const other = await startRun();
    expect((await child.client.fail('send_message', { to: other.rootId, content: 'x' })).code).toBe('task_mismatch');
  });

  it('refuses a terminated recipient', async () => {
    const { root, runId, child } = await rootAndChild();
    await approve(root, child);
    await eventsOf(runId, 'agent_completed');
    const error = await root.fail('send_message', { to: child.agentId, content: 'are you there?' });
    expect(error.code).toBe('recipient_terminated');
  });

  it('refuses with inbox_full at the cap, and accepts again after an acknowledgement', async () => {
    const { root, rootId, child } = await rootAndChild({ inbox_cap: 3 });
    // The root's inbox already holds nothing; fill it to the cap.
    for (let i = 0; i < 3; i++) await child.client.ok('send_message', { to: rootId, content: `m${i}` });
    const error = await child.client.fail('send_message', { to: rootId, content: 'one too many' });
    expect(error).toMatchObject({ code: 'inbox_full', cap: 3 });
    const first = (await root.inbox(0, 0)).messages[0];
    await root.ack(first.seq);
    await child.client.ok('send_message', { to: rootId, content: 'fits now' });
    expect((await root.inbox(0, 0)).messages.map((m) => m.content)).toEqual(['m1', 'm2', 'fits now']);
  });

  it('refuses with inbox_full when pending content would pass the byte budget', async () => {
    const { rootId, child } = await rootAndChild({ inbox_bytes: 1000 });
    await child.client.ok('send_message', { to: rootId, content: 'x'.repeat(600) });
    const error = await child.client.fail('send_message', { to: rootId, content: 'é'.repeat(300) });
    expect(error).toMatchObject({ code: 'inbox_full', cap_bytes: 1000 });
  });

  it('refuses ids that cannot name an agent, and names like __proto__ are no agent', async () => {
    const { root } = await rootAndChild();
    for (const to of ['../x', 'a b', '']) {
      expect(await root.fail('send_message', { to, content: 'x' })).toMatchObject({ code: 'invalid_input', field: 'to' });
      expect(await root.fail('terminate_child', { agent_id: to, force: true })).toMatchObject({ code: 'invalid_input', field: 'agent_id' });
    }
    for (const to of ['__proto__', 'constructor', 'toString']) {
      expect((await root.fail('send_message', { to, content: 'x' })).code).toBe('unknown_recipient');
      expect((await root.fail('terminate_child', { agent_id: to, force: true })).code).toBe('unknown_agent');
    }
    // The leader's workflow is unharmed.
    expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });
  });

  it('a terminate sentinel is consumed through the inbox like any message', async () => {
    const { root, child } = await rootAndChild();
    await child.client.ok('signal_review', { detail: '[REVIEW REQUIRED] done' });
    await root.ok('terminate_child', { agent_id: child.agentId });
    const sentinel = await waitForInbox(child.client, (m) => m.kind === 'terminate');
    expect(sentinel.content).toMatch(/^\[TERMINATE\]/);
    await child.client.ack(sentinel.seq);
    // The ack that ended it also ended its token, before it was answered: the very next look at its inbox is not let in.
    await expect(child.client.inbox(0, 0)).rejects.toThrow(/token_revoked/);
    // A terminated agent changes nothing more: not let in, or refused as terminated by a gateway that let it in.
    const refusal = (call: Promise<{ code: string }>) => call.then((r) => r.code, (e: Error) => (/token_revoked/.test(e.message) ? 'token_revoked' : e.message));
    expect(['agent_terminated', 'token_revoked']).toContain(
      await refusal(child.client.fail('declare_plan', { tasks: [{ id: 'x', role: 'r', skill: 'worker', task: 't' }] })),
    );
    expect(['agent_terminated', 'token_revoked']).toContain(await refusal(child.client.fail('signal_review', { detail: '[REVIEW REQUIRED] again' })));
  });
});
