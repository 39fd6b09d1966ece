import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { namedPaths, reviewArtifacts } from '../../activities/artifacts';

/** The files a root's report names, for the person's card: inside the workspace only, bounded, text previewed. */
describe('review artifacts', () => {
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-artifacts-'));
  afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }));

  it('finds the paths a report names, and none outside the workspace', () => {
    const report = `[REVIEW REQUIRED] Wrote \`src/api.ts\`, ./docs/guide.md and ${workspace}/out/data.csv. Not ../secret.txt, /etc/passwd or ${workspace}/../x.md. See (notes.txt).`;
    expect(namedPaths(report, workspace)).toEqual(['src/api.ts', 'docs/guide.md', 'out/data.csv', 'notes.txt']);
  });

  it('lists named files and the artifacts folder, previews text, never follows a link out', async () => {
    fs.mkdirSync(path.join(workspace, 'artifacts', 'api'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'artifacts', 'api', 'result.md'), `${'y'.repeat(3000)}`);
    fs.writeFileSync(path.join(workspace, 'blob.bin'), Buffer.from([1, 0, 2, 3]));
    fs.symlinkSync('/etc/hostname', path.join(workspace, 'artifacts', 'api', 'link'));
    const files = await reviewArtifacts({ workspace, report: 'See blob.bin and missing.txt.' });
    expect(files.map((f) => [f.path, f.bytes, f.preview?.length ?? null])).toEqual([
      ['blob.bin', 4, null],
      ['artifacts/api/result.md', 3000, 1201],
    ]);
  });

  it('stops at twenty files', async () => {
    fs.mkdirSync(path.join(workspace, 'artifacts', 'many'), { recursive: true });
    for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(workspace, 'artifacts', 'many', `f${String(i).padStart(2, '0')}.txt`), 'x');
    expect(await reviewArtifacts({ workspace, report: '' })).toHaveLength(20);
  });

  it('keeps the previews to 12,000 characters in all: past that, files are listed without one', async () => {
    const big = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-artifacts-big-'));
    fs.mkdirSync(path.join(big, 'artifacts', 't'), { recursive: true });
    for (let i = 0; i < 15; i++) fs.writeFileSync(path.join(big, 'artifacts', 't', `f${String(i).padStart(2, '0')}.md`), 'z'.repeat(2000));
    const files = await reviewArtifacts({ workspace: big, report: '' });
    fs.rmSync(big, { recursive: true, force: true });
    expect(files).toHaveLength(15);
    expect(files.reduce((n, f) => n + (f.preview?.length ?? 0), 0)).toBeLessThanOrEqual(12_000);
    expect(files.filter((f) => f.preview_omitted)).toHaveLength(6);
  });

  /**
   * The attack of issue 39: a root that can write its workspace makes links to the host's root and the data
   * folder, then names files through them in its report. The worker runs as root, so nothing may be read through a
   * link, wherever in the path it is.
   */
  it('shows nothing reached through a linked folder, a linked workspace or a hard link', async () => {
    const data = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-artifacts-data-'));
    const ws = path.join(data, 'runs', 'run_1', 'workspace');
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(data, 'secrets.json'), '{"tokenSecret":"s3cret"}');
    fs.writeFileSync(path.join(ws, 'ok.md'), 'fine');
    fs.symlinkSync('/', path.join(ws, 'hostroot'));
    fs.symlinkSync(data, path.join(ws, 'datalink'));
    fs.mkdirSync(path.join(ws, 'artifacts'));
    fs.symlinkSync(data, path.join(ws, 'artifacts', 'data'));
    fs.linkSync(path.join(data, 'secrets.json'), path.join(ws, 'copy.json'));
    const report = 'Done: ok.md, hostroot/etc/hostname, hostroot/etc/passwd, datalink/secrets.json, datalink/ and copy.json, nothing else';
    const files = await reviewArtifacts({ workspace: ws, report, dataDir: data });
    expect(files.map((f) => [f.path, f.preview])).toEqual([
      ['ok.md', 'fine'],
      // Its size only: a second name of a file may be a name of anything the worker can read.
      ['copy.json', null],
    ]);
    expect(JSON.stringify(files)).not.toContain('s3cret');

    // The run's folder swapped for a link to another tree that has a workspace of its own: nothing is read.
    const elsewhere = path.join(data, 'elsewhere', 'workspace');
    fs.mkdirSync(elsewhere, { recursive: true });
    fs.writeFileSync(path.join(elsewhere, 'ok.md'), 'from elsewhere');
    fs.renameSync(path.join(data, 'runs', 'run_1'), path.join(data, 'runs', 'run_1.real'));
    fs.symlinkSync(path.join(data, 'elsewhere'), path.join(data, 'runs', 'run_1'));
    expect(await reviewArtifacts({ workspace: ws, report: 'ok.md', dataDir: data })).toEqual([]);
    fs.rmSync(data, { recursive: true, force: true });
  });

  const asRoot = process.getuid?.() === 0 ? it : it.skip;
  asRoot('reads as the account it is given: what that account may not read is not shown', async () => {
    const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-artifacts-acct-'));
    fs.chmodSync(ws, 0o755);
    fs.writeFileSync(path.join(ws, 'shared.md'), 'for everyone', { mode: 0o644 });
    fs.writeFileSync(path.join(ws, 'private.md'), 'root only', { mode: 0o600 });
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    const files = await reviewArtifacts({ workspace: ws, report: 'shared.md and private.md', account: { uid: nobody, groups: [nobody], home: '/' } });
    // The positive sign that the reader ran as the account: root would have read both.
    expect(files.map((f) => f.path)).toEqual(['shared.md']);
    expect((await reviewArtifacts({ workspace: ws, report: 'shared.md and private.md' })).map((f) => f.path)).toEqual(['shared.md', 'private.md']);
    fs.rmSync(ws, { recursive: true, force: true });
  });
});
