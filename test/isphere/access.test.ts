import { closeAll, eventsOf, spawn, startRun, task } from '../support/team';
import { connect } from '../support/team';
import { isphereAgent, sim } from './support';

/** Who may use the isphere tools: the operator's access policy, and the review gate of a leader with reviews waiting. */
afterAll(closeAll);

beforeAll(() => sim.control('POST', '/reset', {}));

it('refuses every read to an agent whose skill the policy grants nothing, before any source is asked', async () => {
  const { isphere } = await isphereAgent('reviewer');
  for (const [tool, args] of [
    ['isphere_search_contacts', { query: 'Li Wei' }],
    ['isphere_search_groups', { query: 'Finance' }],
    ['isphere_receive_messages', { conversation_id: 'conv_d_0001' }],
    ['isphere_receive_files', {}],
  ] as const) {
    const refused = await isphere.call(tool, args);
    expect([tool, refused.error]).toEqual([tool, expect.objectContaining({ code: 'PERMISSION_DENIED', details: { reason: 'access_policy' } })]);
    expect(refused.data.audit).toMatchObject({ tool, source: null, result: 'error' });
  }
  expect((await isphere.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x' })).code).toBe('PERMISSION_DENIED');
});

it('refuses isphere tools to a leader whose child waits for review, and records it; an answered review opens them again', async () => {
  const { runId, root } = await startRun();
  const isphere = await connect(root.token, 'isphere');
  await root.ok('declare_plan', { tasks: [task('a')] });
  const a = await spawn(root, runId, 'a');
  await a.client.ok('signal_review', { detail: '[REVIEW REQUIRED] a is done' });
  for (const [tool, args] of [
    ['isphere_search_contacts', { query: 'Li Wei' }],
    ['isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x' }],
  ] as const) {
    const refused = await isphere.call(tool, args);
    expect(refused.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'review_gate_denied', pending_reviews: [expect.objectContaining({ agent_id: a.agentId })] } });
    expect(refused.error!.message).toContain(a.agentId);
    expect(refused.data.audit).toMatchObject({ tool, result: 'error' });
  }
  const denied = await eventsOf(runId, 'review_gate.denied', 2);
  expect(denied.map((e) => e.data.tool)).toEqual(expect.arrayContaining(['isphere_search_contacts', 'isphere_send_message']));
  expect(await sim.deliveries()).toEqual([]);

  await root.ok('send_message', { to: a.agentId, content: 'One more test, please.' });
  expect((await isphere.ok('isphere_search_contacts', { query: 'Li Wei' })).contacts).toHaveLength(2);
});

it('grants a member nothing its leader may not read: a skill picked at spawn reads beyond the leader only where a rule says so', async () => {
  const { runId, root } = await startRun();
  const rootIsphere = await connect(root.token, 'isphere');
  await root.ok('declare_plan', { tasks: [task('a')] });
  const member = await spawn(root, runId, 'a');
  const isphere = await connect(member.launch.token, 'isphere');
  const read = async (client: typeof isphere, conversation: string) => {
    const out = await client.call('isphere_receive_messages', { conversation_id: conversation });
    return out.error ? out.error.code : 'read';
  };
  // The lead (the root) may not read groups 4 and 5; the worker skill may, 4 by a plain rule and 5 beyond its leader.
  expect([await read(rootIsphere, 'conv_g_0004'), await read(rootIsphere, 'conv_g_0005')]).toEqual(['PERMISSION_DENIED', 'PERMISSION_DENIED']);
  expect(await read(isphere, 'conv_g_0004')).toBe('PERMISSION_DENIED');
  expect(await read(isphere, 'conv_g_0005')).toBe('read');
  // What both may read, the member reads; a target its leader cannot read is no send target either.
  expect(await read(isphere, 'conv_g_0001')).toBe('read');
  expect((await isphere.fail('isphere_send_message', { target_type: 'group', target_id: 'g_0004', content_text: 'x' })).code).toBe('PERMISSION_DENIED');
});
