import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const MAIN = 'src/isphere/bridgeSim/main.ts';

describe('isphere bridge simulator: standalone main.ts', () => {
  it('prints its url, serves, and exits 0 on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DIPPER_ISPHERE_BRIDGE_TOKEN: 'main-bridge', DIPPER_ISPHERE_SIM_CONTROL_TOKEN: 'main-control', DIPPER_ISPHERE_SIM_PORT: '0' };
    delete env.DIPPER_ISPHERE_SIM_HOST;
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const match = /^isphere bridge simulator listening on (http:\/\/127\.0\.0\.1:\d+)\n/.exec(out);
          if (match) resolve(match[1]);
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ ok: true });
      const status = await fetch(`${url}/v1/status`, { headers: { authorization: 'Bearer main-bridge' } });
      expect(await status.json()).toMatchObject({ logged_in: true });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('refuses to start without a control token', async () => {
    const env = { ...process.env, DIPPER_ISPHERE_BRIDGE_TOKEN: 'main-bridge', DIPPER_ISPHERE_SIM_CONTROL_TOKEN: '' };
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain('DIPPER_ISPHERE_SIM_CONTROL_TOKEN is required');
  });
});
