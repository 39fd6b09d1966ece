import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { paths } from '../../src/paths';
import type { AgentClient } from '../support/clients';
import { closeAll, env, operator } from '../support/team';
import { isphereAgent, sim } from './support';

/**
 * Both file tools on the run's host: downloads written only under an
 * approved folder, files sent only from one, symlinks and traversal refused
 * either way, and a file changed after its approval not sent.
 */
afterAll(closeAll);

let runId: string;
let agent: AgentClient;
let downloads: string;
let outbound: string;
beforeAll(async () => {
  await sim.control('POST', '/reset', {});
  ({ runId, isphere: agent } = await isphereAgent());
  const workspace = paths.runWorkspace(env.dataDir, runId);
  downloads = path.join(workspace, 'isphere', 'downloads');
  outbound = path.join(workspace, 'isphere', 'outbound');
  fs.mkdirSync(downloads, { recursive: true });
  fs.mkdirSync(outbound, { recursive: true });
});

const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
const approve = (id: string) => operator.request('POST', `/runs/${runId}/isphere/approvals/${id}/approve`, {});

describe('isphere_receive_files downloads', () => {
  it('writes a message\'s files under the run\'s download folder, each with its size and sha256, and again changes nothing', async () => {
    const files = (await sim.bridge('/v1/files?conversation_id=conv_g_0001')).items;
    const f = files[0];
    const dir = path.join(downloads, 'finance');
    const got = await agent.ok('isphere_receive_files', { mode: 'download', message_id: f.message_id, output_dir: dir, dry_run: false });
    expect(got.audit.dry_run).toBe(false);
    const mine = files.filter((x: any) => x.message_id === f.message_id);
    expect(got.files.map((x: any) => x.file_id)).toEqual(mine.map((x: any) => x.file_id));
    for (const saved of got.files) {
      expect(path.dirname(saved.saved_path)).toBe(dir);
      const bytes = fs.readFileSync(saved.saved_path);
      expect([bytes.length, sha(bytes)]).toEqual([saved.size_bytes, saved.sha256]);
      expect(saved.sha256).toBe(mine.find((x: any) => x.file_id === saved.file_id).sha256);
      expect(fs.statSync(saved.saved_path).mode & 0o777).toBe(0o640);
    }
    const again = await agent.ok('isphere_receive_files', { mode: 'download', message_id: f.message_id, output_dir: dir, dry_run: false });
    expect(again.files.map((x: any) => x.saved_path)).toEqual(got.files.map((x: any) => x.saved_path));
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.part'))).toEqual([]);
  });

  it('refuses a folder outside the approved ones, one reached through a symlink, and a climbing path', async () => {
    const [f] = (await sim.bridge('/v1/files?conversation_id=conv_g_0001')).items;
    const outside = fs.mkdtempSync('/tmp/dipper-outside-');
    fs.symlinkSync(outside, path.join(downloads, 'escape'));
    const call = (output_dir: string) => agent.call('isphere_receive_files', { mode: 'download', file_id: f.file_id, message_id: f.message_id, output_dir, dry_run: false });
    for (const dir of [outside, path.join(downloads, 'escape'), path.join(downloads, 'escape', 'deeper')]) {
      const refused = await call(dir);
      expect([dir, refused.error]).toEqual([dir, expect.objectContaining({ code: 'PERMISSION_DENIED', details: { reason: 'outside_approved_dir', field: 'output_dir' } })]);
    }
    expect((await call(`${downloads}/../../../etc`)).error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'output_dir' } });
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe('isphere_send_file', () => {
  it('hashes a file of the run\'s outbound folder, asks for approval, and sends it once', async () => {
    const file = path.join(outbound, 'report.txt');
    fs.writeFileSync(file, 'Quarterly report, final.\n');
    const args = { target_type: 'contact', target_id: 'c_0003', file_path: file, caption: 'The report.' };
    const plan = await agent.ok('isphere_send_file', args);
    expect(plan).toMatchObject({ send_status: 'planned', file_sha256: sha('Quarterly report, final.\n'), file_size_bytes: 25, file_ref: null, approval: { status: 'pending' } });
    expect(plan.audit).toMatchObject({ file_sha256: plan.file_sha256, content_sha256: sha('The report.') });
    await approve(plan.approval.approval_id);
    const sent = await agent.ok('isphere_send_file', { ...args, dry_run: false, approval_id: plan.approval.approval_id });
    expect(sent).toMatchObject({ send_status: 'sent', file_ref: expect.any(String), file_sha256: plan.file_sha256 });
    const delivered = (await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${plan.approval.approval_id}`);
    expect(delivered).toEqual([expect.objectContaining({ kind: 'file', content_sha256: plan.file_sha256 })]);
  });

  it('refuses a real send without approval_id, its audit naming the target, caption and file it would have sent', async () => {
    const file = path.join(outbound, 'unasked.txt');
    fs.writeFileSync(file, 'Never approved.');
    const refused = await agent.call('isphere_send_file', { target_type: 'contact', target_id: 'c_0003', file_path: file, caption: 'Here.', dry_run: false });
    expect(refused.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { field: 'approval_id', approval_status: 'missing' } });
    expect(refused.data.audit).toMatchObject({ dry_run: false, target_ref: 'c_0003', content_sha256: sha('Here.'), file_sha256: sha('Never approved.') });
    // A path it may not send from is still answered as the missing approval.
    const outsideToo = await agent.call('isphere_send_file', { target_type: 'contact', target_id: 'c_0003', file_path: '/etc/hostname', dry_run: false });
    expect(outsideToo.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'missing' } });
    expect(outsideToo.data.audit).toMatchObject({ target_ref: 'c_0003', file_sha256: null });
  });

  it('does not send a file changed after its approval', async () => {
    const file = path.join(outbound, 'draft.txt');
    fs.writeFileSync(file, 'Draft one.');
    const args = { target_type: 'contact', target_id: 'c_0003', file_path: file };
    const plan = await agent.ok('isphere_send_file', args);
    await approve(plan.approval.approval_id);
    fs.writeFileSync(file, 'Draft two, swapped in after the approval.');
    const refused = await agent.call('isphere_send_file', { ...args, dry_run: false, approval_id: plan.approval.approval_id });
    expect(refused.error).toMatchObject({ code: 'APPROVAL_REQUIRED', details: { approval_status: 'mismatch' } });
    expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${plan.approval.approval_id}`)).toEqual([]);
  });

  it('refuses a file outside the outbound folders, one reached through a symlink, a folder, and one too large', async () => {
    fs.symlinkSync('/etc/hostname', path.join(outbound, 'leak'));
    fs.mkdirSync(path.join(outbound, 'folder'));
    const big = path.join(outbound, 'big.bin');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 21 * 1024 * 1024);
    const call = (file_path: string) => agent.call('isphere_send_file', { target_type: 'contact', target_id: 'c_0003', file_path });
    for (const [file, code, reason] of [
      ['/etc/hostname', 'PERMISSION_DENIED', 'outside_approved_dir'],
      [path.join(outbound, 'leak'), 'PERMISSION_DENIED', 'outside_approved_dir'],
      [path.join(outbound, 'folder'), 'INVALID_ARGUMENT', 'not_a_file'],
      [path.join(outbound, 'missing.txt'), 'TARGET_NOT_FOUND', 'not_found'],
      [big, 'INVALID_ARGUMENT', 'too_large'],
    ]) {
      const refused = await call(file);
      expect([file, refused.error]).toEqual([file, expect.objectContaining({ code, details: { reason, field: 'file_path' } })]);
    }
    expect((await call(`${outbound}/../../../../etc/hostname`)).error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'file_path' } });
  });
});
