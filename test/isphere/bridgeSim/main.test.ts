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

  it('starts with nothing set, on its documented port, and prints the tokens it made up', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of ['DIPPER_ISPHERE_BRIDGE_TOKEN', 'DIPPER_ISPHERE_SIM_CONTROL_TOKEN', 'DIPPER_ISPHERE_SIM_PORT', 'DIPPER_ISPHERE_SIM_HOST']) delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          if (text.includes('Its control routes')) resolve(text);
        });
        child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
      });
      expect(out).toMatch(/^isphere bridge simulator listening on http:\/\/127\.0\.0\.1:8790\n/);
      const token = /DIPPER_ISPHERE_BRIDGE_TOKEN=(\S+)/.exec(out)![1];
      const status = await fetch('http://127.0.0.1:8790/v1/status', { headers: { authorization: `Bearer ${token}` } });
      expect(await status.json()).toMatchObject({ logged_in: true });
    } finally {
      child.kill('SIGKILL');
    }
  });
});
