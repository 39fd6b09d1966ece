import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readTestEnv, testDataRoot } from '../setup/env';
import { AgentClient } from '../support/clients';
import { projectRoot } from '../support/processes';

const env = readTestEnv();
let up: ChildProcess | undefined;
let output = '';
let errors = '';

afterAll(async () => {
  if (up && up.exitCode === null) {
    up.kill('SIGKILL');
  }
});

/** Everything printed until the closing brace of the MCP client config. */
async function untilConfigPrinted(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no MCP config printed; output so far:\n${output}\n${errors}`)), 90_000);
    proc.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const at = output.indexOf('MCP client config for the root agent:');
      if (at >= 0 && /\n}\n/.test(output.slice(at))) {
        clearTimeout(timer);
        resolve(output);
      }
    });
    proc.once('exit', (code) => reject(new Error(`dipper up exited with ${code}:\n${output}\n${errors}`)));
  });
}

describe('npm start (dipper up)', () => {
  it('prints the endpoints, the operator token and a working MCP client config, and stops cleanly', async () => {
    const dataDir = path.join(testDataRoot, 'up-data');
    up = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'up', '--task', 'Say hello.'], {
      cwd: projectRoot,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: env.temporalAddress,
        DIPPER_DATA_DIR: dataDir,
        // Its own record, so it neither meets nor replaces a developer's `npm start`.
        DIPPER_STACK_FILE: path.join(dataDir, 'stack.json'),
        DIPPER_SKILLS_DIR: env.skillsDir,
        DIPPER_PORT: '28780',
        DIPPER_TASK_QUEUE: 'dipper-up',
        DIPPER_WORKFLOW_BUNDLE: env.bundlePath,
        // Its start-up logs shown, to see that they all come before the banner.
        DIPPER_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const printed = await untilConfigPrinted(up);
    // Every process's start-up log comes before the banner, and the config is the last thing printed.
    const banner = printed.indexOf('Dipper is up.');
    for (const line of ['"msg":"worker running"', '"msg":"Temporal server"', '"msg":"gateway listening"', 'task service listening']) {
      expect(printed.indexOf(line)).toBeGreaterThanOrEqual(0);
      expect(printed.indexOf(line)).toBeLessThan(banner);
    }
    expect(printed.slice(printed.indexOf('MCP client config for the root agent:'))).toMatch(/^MCP client config for the root agent:\n\{[\s\S]*\n\}\n$/);
    const secrets = JSON.parse(fs.readFileSync(path.join(dataDir, 'secrets.json'), 'utf8'));
    // The labels are padded to one column, whose width the longest label decides.
    expect(printed).toMatch(/MCP endpoint \(beidou\): +http:\/\/127\.0\.0\.1:28780\/mcp\/beidou\n/);
    expect(printed).toMatch(new RegExp(`Operator token: +${secrets.operatorToken}\n`));
    expect(printed).toMatch(/Temporal UI: +external server/);

    // Said where the config is printed: a client can call the tools but not hear the inbox.
    expect(printed).toContain('It does not hear\nthe root\'s inbox');
    const config = JSON.parse(printed.slice(printed.indexOf('{', printed.indexOf('MCP client config for the root agent:'))));
    expect(Object.keys(config.mcpServers)).toEqual(['beidou', 'agentteam', 'isphere']);
    const server = config.mcpServers.beidou;
    expect(server).toMatchObject({ type: 'http', url: 'http://127.0.0.1:28780/mcp/beidou' });
    const agent = await AgentClient.connect('http://127.0.0.1:28780', server.headers.Authorization.replace('Bearer ', ''));
    const peers = await agent.ok('list_peers', { scope: 'all' });
    expect(peers.peers).toHaveLength(1);
    await agent.close();

    // 'close', not 'exit': every line the stack wrote is in by then.
    const exited = new Promise<number | null>((r) => up!.once('close', (code) => r(code)));
    up.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The worker used to throw on SIGTERM (IllegalStateError: Not running) and print its stack.
    expect(errors).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    // The gateway it started is gone with it.
    await expect(fetch('http://127.0.0.1:28780/healthz')).rejects.toThrow();
  }, 120_000);
});
