import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

describe('task service: standalone main.ts', () => {
  it('prints its url, serves, and exits 0 on SIGTERM', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskservice-main-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DIPPER_TASK_SERVICE_DB: path.join(dir, 'tasks.db'), DIPPER_TASK_SERVICE_PORT: '0', DIPPER_TASK_ADMIN_KEY: 'main-test-key' };
    delete env.DIPPER_TASK_SERVICE_HOST;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/taskservice/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /^task service listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (match) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ ok: true });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(fs.existsSync(path.join(dir, 'tasks.db'))).toBe(true);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start without an admin key', async () => {
    const env = { ...process.env, DIPPER_TASK_ADMIN_KEY: '' };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/taskservice/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain('DIPPER_TASK_ADMIN_KEY is required');
  });
});
