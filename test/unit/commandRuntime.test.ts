import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandRuntime } from '../../activities/runtimes/command';
import type { LaunchPayload } from '../../activities/runtimes/payload';

const payload = (dir: string): LaunchPayload => ({
  run_id: 'run_000000000000',
  agent_id: 'ag_000000000000',
  name: 'x',
  role: 'x',
  skill: 'worker',
  model: null,
  token: 'dpa_secret',
  mcp_url: 'http://127.0.0.1:1/mcp/beidou',
  inbox_url: 'http://127.0.0.1:1/api/runtime/inbox',
  skill_body: '',
  first_message: 'hi',
  rules: [],
  workspace_path: dir,
  artifacts_path: null,
  mode: 'first',
});

describe('the command runtime', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-cmd-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('refuses at once, without crashing its process, when the command does not exist', () => {
    const runtime = new CommandRuntime(() => undefined);
    expect(() => runtime.launch(['/nonexistent/runtime-binary'], payload(dir), path.join(dir, 'a'), 'first')).toThrow(
      /could not be started/,
    );
    expect(fs.existsSync(path.join(dir, 'a', 'runtime.pid'))).toBe(false);
  });

  it('starts a command once, adopts it on a second launch, reports its exit and stops it', async () => {
    const exits: unknown[] = [];
    const runtime = new CommandRuntime((_who, exit) => exits.push(exit));
    const agentDir = path.join(dir, 'b');
    const first = runtime.launch(['sleep', '30'], payload(dir), agentDir, 'first');
    expect(first.adopted).toBe(false);
    const again = runtime.launch(['sleep', '30'], payload(dir), agentDir, 'first');
    expect(again).toEqual({ pid: first.pid, adopted: true });
    // The token never reaches the command line.
    expect(fs.readFileSync(`/proc/${first.pid}/cmdline`, 'utf8')).not.toContain('dpa_secret');
    expect(fs.statSync(path.join(agentDir, 'launch.json')).mode & 0o777).toBe(0o600);
    await runtime.stop(agentDir);
    await new Promise((r) => setTimeout(r, 300));
    expect(exits).toHaveLength(1);
    expect(fs.existsSync(path.join(agentDir, 'runtime.pid'))).toBe(false);
  });
});
