import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
});
