import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CommandRuntime } from '../../activities/runtimes/command';
import type { LaunchPayload } from '../../src/common/launchPayload';
import { agentEnv } from '../../activities/runtimes/agentEnv';
import { loadConfig } from '../../src/config';
import { eventually } from '../support/clients';

const payload = (dir: string): LaunchPayload => ({
  run_id: 'run_000000000000',
  agent_id: 'ag_000000000000',
  name: 'x',
  role: 'x',
  skill: 'worker',
  model: null,
  token: 'dpa_secret',
  mcp_url: 'http://127.0.0.1:1/mcp/beidou',
  task_mcp_url: 'http://127.0.0.1:1/mcp/agentteam',
  isphere_mcp_url: 'http://127.0.0.1:1/mcp/isphere',
  inbox_url: 'http://127.0.0.1:1/api/runtime/inbox',
  skill_body: '',
  first_message: 'hi',
  skills: [],
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
    expect(() => runtime.launch(['/nonexistent/runtime-binary'], payload(dir), path.join(dir, 'a'), 'first', {})).toThrow(
      /could not be started/,
    );
    expect(fs.existsSync(path.join(dir, 'a', 'runtime.pid'))).toBe(false);
  });

  it('starts a command once, adopts it on a second launch, reports its exit and stops it', async () => {
    const exits: unknown[] = [];
    const runtime = new CommandRuntime((_who, exit) => exits.push(exit));
    const agentDir = path.join(dir, 'b');
    const first = runtime.launch(['sleep', '30'], payload(dir), agentDir, 'first', { PATH: '/usr/bin:/bin' });
    expect(first.adopted).toBe(false);
    const again = runtime.launch(['sleep', '30'], payload(dir), agentDir, 'first', { PATH: '/usr/bin:/bin' });
    expect(again).toEqual({ pid: first.pid, adopted: true });
    // The token never reaches the command line.
    expect(fs.readFileSync(`/proc/${first.pid}/cmdline`, 'utf8')).not.toContain('dpa_secret');
    expect(fs.existsSync(path.join(agentDir, 'launch.json'))).toBe(false);
    await runtime.stop(agentDir);
    await eventually(async () => exits.length > 0 || undefined);
    expect(exits).toEqual([expect.objectContaining({ pid: first.pid, signal: 'SIGTERM' })]);
    expect(fs.existsSync(path.join(agentDir, 'runtime.pid'))).toBe(false);
  });

  it('at a worker\'s start, watches the processes still running and reports those that ended while no worker watched', async () => {
    const runs = path.join(dir, 'runs');
    const agentDir = (agent: string) => path.join(runs, 'run_000000000000', 'agents', agent);
    // An earlier worker started two agents, then died; one agent's process died too before the next worker came.
    const earlier = new CommandRuntime(() => undefined);
    const living = earlier.launch(['sleep', '30'], payload(dir), agentDir('ag_living'), 'first', { PATH: '/usr/bin:/bin' });
    const dead = earlier.launch(['/bin/sh', '-c', 'echo last words >&2; exec sleep 30'], payload(dir), agentDir('ag_dead'), 'first', { PATH: '/usr/bin:/bin' });
    await eventually(async () => fs.readFileSync(path.join(agentDir('ag_dead'), 'stderr.log'), 'utf8').includes('last words') || undefined);
    const deadPidFile = fs.readFileSync(path.join(agentDir('ag_dead'), 'runtime.pid'), 'utf8');
    process.kill(-dead.pid, 'SIGKILL');
    // The earlier worker's own handler removes the file as it sees the exit; a dead worker would not have.
    await eventually(async () => !fs.existsSync(path.join(agentDir('ag_dead'), 'runtime.pid')) || undefined);
    fs.writeFileSync(path.join(agentDir('ag_dead'), 'runtime.pid'), deadPidFile);

    const exits: Array<{ agent: string; pid: number; stderr_tail: string[] }> = [];
    const next = new CommandRuntime((who, exit) => exits.push({ agent: who.agent_id, ...exit }));
    expect(next.adoptAll(runs)).toBe(1);
    expect(exits).toEqual([expect.objectContaining({ agent: 'ag_dead', pid: dead.pid, stderr_tail: ['last words'] })]);
    expect(fs.existsSync(path.join(agentDir('ag_dead'), 'runtime.pid'))).toBe(false);
    // A worker started after that one hears of it no more.
    const later: string[] = [];
    expect(new CommandRuntime((who) => later.push(who.agent_id)).adoptAll(runs)).toBe(1);
    // The living one is watched: its end is reported when it comes.
    process.kill(-living.pid, 'SIGKILL');
    await eventually(async () => (exits.length > 1 && later.length > 0) || undefined);
    expect(exits[1]).toEqual(expect.objectContaining({ agent: 'ag_living', pid: living.pid }));
    expect(later).toEqual(['ag_living']);
  });
});

describe('an agent process\'s environment', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-env-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('holds what agentEnv gives it and nothing of the worker\'s, and the payload comes on stdin alone', async () => {
    const worker = { DIPPER_TOKEN_SECRET: 'signing-secret', DIPPER_OPERATOR_TOKEN: 'dpo_x', TEMPORAL_ADDRESS: 'x:1', MODEL_KEY: 'mk-1', OTHER: 'o' };
    Object.assign(process.env, worker);
    try {
      const p = payload(dir);
      const env = agentEnv({ kind: 'command', env: { MODE: 'fast' }, pass_env: ['MODEL_KEY', 'DIPPER_TOKEN_SECRET'] }, p, '/home/agent');
      const runtime = new CommandRuntime(() => undefined);
      const script = 'env > "$0"; cat > "$1"';
      runtime.launch(['/bin/sh', '-c', script, path.join(dir, 'env.txt'), path.join(dir, 'stdin.txt')], p, path.join(dir, 'agent'), 'first', env);
      const stdin = await eventually(async () => {
        const text = fs.existsSync(path.join(dir, 'stdin.txt')) ? fs.readFileSync(path.join(dir, 'stdin.txt'), 'utf8') : '';
        return text.endsWith('}') ? text : undefined;
      });
      expect(JSON.parse(stdin)).toEqual(p);
      const seen = Object.fromEntries(
        fs.readFileSync(path.join(dir, 'env.txt'), 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      expect(seen).toMatchObject({ MODE: 'fast', MODEL_KEY: 'mk-1', HOME: '/home/agent', DIPPER_AGENT_TOKEN: 'dpa_secret', DIPPER_RUN_ID: p.run_id });
      for (const name of ['DIPPER_TOKEN_SECRET', 'DIPPER_OPERATOR_TOKEN', 'TEMPORAL_ADDRESS', 'OTHER', 'DIPPER_LAUNCH_FILE']) expect(seen).not.toHaveProperty(name);
      // The same node that runs Dipper comes first on PATH.
      expect(seen.PATH.split(':')[0]).toBe(path.dirname(process.execPath));
    } finally {
      for (const name of Object.keys(worker)) delete process.env[name];
    }
  });

  it('is checked when the configuration loads: Dipper\'s secrets cannot be listed for agents', () => {
    const runtimes = (choice: object) => JSON.stringify({ default: { kind: 'command', command: ['x'], ...choice } });
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ pass_env: ['DIPPER_TOKEN_SECRET'] }) })).toThrow(/DIPPER_TOKEN_SECRET is Dipper's own/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ env: { TEMPORAL_ADDRESS: 'x' } }) })).toThrow(/TEMPORAL_ADDRESS is Dipper's own/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ pass_env: 'MODEL_KEY' }) })).toThrow(/pass_env must be a list/);
    expect(loadConfig({ DIPPER_RUNTIMES: runtimes({ pass_env: ['MODEL_KEY'] }) }).runtimes.default.pass_env).toEqual(['MODEL_KEY']);
  });
});
