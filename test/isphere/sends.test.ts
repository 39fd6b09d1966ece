import { createHash } from 'node:crypto';
import { closeAll } from '../support/team';
import type { AgentClient } from '../support/clients';
import { isphereAgent, sim } from './support';

/**
 * The send tools before any person approves: a dry run resolves the target
 * and plans the send; nothing ever reaches the bridge (approvals.test.ts
 * goes on from there).
 */
afterAll(closeAll);

let agent: AgentClient;
beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  agent = (await isphereAgent()).isphere;
});

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('isphere_send_message', () => {
  it('plans a send by dry run (the default): the target resolved from its id or its one exact name, and the content hash', async () => {
    const byId = await agent.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'Numbers attached, 你好.' });
    expect(byId).toMatchObject({
      ok: true,
      dry_run: true,
      send_status: 'planned',
      target: { target_type: 'contact', target_id: 'c_0003', display_name: 'Wang Fang' },
      message_ref: null,
      content_sha256: sha('Numbers attached, 你好.'),
    });
    expect(byId.audit).toMatchObject({ tool: 'isphere_send_message', dry_run: true, source: 'bridge', target_ref: 'c_0003', content_sha256: sha('Numbers attached, 你好.'), approval_id: byId.approval.approval_id });

    const byName = await agent.ok('isphere_send_message', { target_type: 'group', target_id: 'finance team', content_text: 'Hi all.' });
    expect(byName.target).toEqual({ target_type: 'group', target_id: 'g_0001', display_name: 'Finance Team' });
    const conversation = await agent.ok('isphere_send_message', { target_type: 'conversation', target_id: 'conv_s_0001', content_text: 'x' });
    expect(conversation.target.display_name).toBe('System Notices');
    expect(await sim.deliveries()).toEqual([]);
  });

  it('refuses a name that matches several targets, naming the candidates, and sends nothing', async () => {
    const refused = await agent.call('isphere_send_message', { target_type: 'contact', target_id: 'Li Wei', content_text: 'Which one?' });
    expect(refused.error).toMatchObject({ code: 'AMBIGUOUS_TARGET', retryable: false, details: { field: 'target_id' } });
    expect(refused.error!.details).toMatchObject({
      candidates: [
        { target_type: 'contact', target_id: 'c_0001', display_name: 'Li Wei', department: 'Finance' },
        { target_type: 'contact', target_id: 'c_0002', display_name: 'Li Wei', department: 'R&D' },
      ],
    });
    expect(refused.data.audit).toMatchObject({ result: 'error', target_ref: null, content_sha256: sha('Which one?') });
    expect(await sim.deliveries()).toEqual([]);
  });

  it('refuses unknown, inactive and unreadable targets', async () => {
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'Nobody Here', content_text: 'x' })).toMatchObject({ code: 'TARGET_NOT_FOUND', details: { field: 'target_id' } });
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0005', content_text: 'x' })).toMatchObject({ code: 'TARGET_NOT_FOUND', details: { reason: 'inactive' } });
    expect(await agent.fail('isphere_send_message', { target_type: 'group', target_id: 'g_0007', content_text: 'x' })).toMatchObject({ code: 'TARGET_NOT_FOUND', details: { reason: 'archived' } });
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0006', content_text: 'x' })).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'access_policy' } });
    // A contact id is not a group.
    expect((await agent.fail('isphere_send_message', { target_type: 'group', target_id: 'c_0003', content_text: 'x' })).code).toBe('TARGET_NOT_FOUND');
  });

  it('refuses a real send without approval_id whatever else is wrong, and with one nobody gave: nothing is sent', async () => {
    const missing = await agent.call('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'Go.', dry_run: false });
    expect(missing.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { field: 'approval_id', approval_status: 'missing' } });
    // Its audit names what would have been sent and to whom, like any real-write attempt's.
    expect(missing.data.audit).toMatchObject({ dry_run: false, result: 'error', source: 'bridge', target_ref: 'c_0003', content_sha256: sha('Go.') });
    // A target that is not there, or not the agent's to read, changes nothing of the answer.
    for (const target_id of ['Nobody Here', 'c_0006']) {
      const refused = await agent.call('isphere_send_message', { target_type: 'contact', target_id, content_text: 'Go.', dry_run: false });
      expect([target_id, refused.error?.code, (refused.error?.details as { approval_status?: string } | undefined)?.approval_status]).toEqual([target_id, 'APPROVAL_REQUIRED', 'missing']);
      expect(refused.data.audit).toMatchObject({ target_ref: null, content_sha256: sha('Go.') });
    }
    const forged = await agent.call('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'Go.', dry_run: false, approval_id: 'apr_x' });
    expect(forged.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { field: 'approval_id', approval_status: 'unknown' } });
    expect(forged.data.audit).toMatchObject({ approval_id: 'apr_x', dry_run: false });
    expect(await sim.deliveries()).toEqual([]);
  });

  it('refuses bad input by field: an unknown field, a long text, a local source', async () => {
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x', to: 'y' })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'to' } });
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x'.repeat(20_001) })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'content_text' } });
    expect(await agent.fail('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'x', source_preference: 'local_readonly' })).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'source_preference' },
    });
  });
});

describe('isphere_send_file', () => {
  it('refuses a relative or climbing path by field, and any path here, where no outbound directory is approved', async () => {
    for (const file_path of ['notes.txt', '/tmp/../etc/passwd']) {
      expect(await agent.fail('isphere_send_file', { target_type: 'contact', target_id: 'c_0003', file_path })).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file_path' } });
    }
    const outside = await agent.call('isphere_send_file', { target_type: 'contact', target_id: 'c_0003', file_path: '/etc/hostname' });
    expect(outside.error).toMatchObject({ code: 'PERMISSION_DENIED', details: { reason: 'outside_approved_dir', field: 'file_path' } });
    expect(outside.data.audit).toMatchObject({ tool: 'isphere_send_file', dry_run: true, target_ref: 'c_0003', file_sha256: null });
    expect(await sim.deliveries()).toEqual([]);
  });
});
