import { ApplicationFailure } from '@temporalio/common';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diskFailure, onDisk } from '../../activities/diskFailure';
import { isTaskId, paths } from '../../src/paths';
import { declarePlan } from '../../src/registry/beidou/plans';

const spec = (id: string) => ({ id, role: 'r', skill: 'worker', task: 't' });

describe('plan task ids', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-ids-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('that the schema accepts name a folder directly inside artifacts, which can be created', () => {
    // Near-misses (dots, length 65 to 70) as well as arbitrary text.
    const candidate = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._-]{1,70}$/), fc.string({ maxLength: 80, unit: 'binary' }));
    fc.assert(
      fc.property(candidate, (id) => {
        const accepted = declarePlan.input.safeParse({ tasks: [spec(id)] }).success;
        expect(accepted).toBe(isTaskId(id));
        if (!accepted) return;
        const folder = paths.artifacts(dir, id);
        expect(path.dirname(folder)).toBe(path.join(dir, 'artifacts'));
        expect(path.basename(folder)).toBe(id);
        fs.mkdirSync(folder, { recursive: true });
      }),
      { numRuns: 500 },
    );
  });

  it('are refused by the path builder when they could leave the folder or overflow a name', () => {
    for (const id of ['..', '.', 'a/b', 'a\\b', '%'.repeat(100), 'x'.repeat(65), 'a..b', '', '-a']) {
      expect(() => paths.artifacts(dir, id)).toThrow('unsafe path segment');
    }
  });
});

describe('ids Dipper mints', () => {
  it.each(['..', '../x', 'run_a/b', '.run', 'r'.repeat(101)])('refuses %s as a path segment', (id) => {
    expect(() => paths.run('/data', id)).toThrow('unsafe path segment');
    expect(() => paths.plan('/data', 'run_1', id, 'pl_1')).toThrow('unsafe path segment');
  });
});

describe('a failed disk operation', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-disk-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('becomes internal with a fixed message: no path, no errno code', async () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    const failure = await onDisk('test', () => fs.promises.mkdir(path.join(file, 'under'), { recursive: true })).catch((e) => e);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'internal', nonRetryable: true });
    expect(failure.message).not.toContain(dir);
    expect(failure.message).not.toMatch(/ENOTDIR|EEXIST/);
  });

  it('is retried when a retry may cure it, and not when it cannot', () => {
    const errno = (code: string) => Object.assign(new Error(`${code}: /secret/path`), { code });
    expect(diskFailure('x', errno('ENOSPC')).nonRetryable).toBe(false);
    expect(diskFailure('x', errno('ENAMETOOLONG')).nonRetryable).toBe(true);
    expect(diskFailure('x', new Error('no code at all'))).toMatchObject({ type: 'internal', nonRetryable: false });
  });

  it('keeps a deliberate refusal as it is', () => {
    const refusal = ApplicationFailure.create({ type: 'invalid_input', message: 'bad id', nonRetryable: true });
    expect(diskFailure('x', refusal)).toBe(refusal);
  });
});
