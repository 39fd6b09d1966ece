import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { exec } from '../../src/cli/exec';
import { EXIT } from '../../src/cli/execHelp';
import { writeStackRecord, type StackRecord } from '../../src/cli/stackRecord';
import { findTool } from '../../src/cli/toolCatalog';
import { processStartTime } from '../../src/devstack/processes';
import { toMcpTool } from '../../src/registry/mcpTool';
import { tools } from '../../src/registry';
import { testDataRoot } from '../setup/env';
import { projectRoot } from '../support/processes';
import { closeAll, env, operator, startRun, task } from '../support/team';
import { cleanEnv } from './npmStart';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A folder of this file's own, so a stack file or secrets written here touch nothing else. */
const scratch = path.join(testDataRoot, 'cli-exec');
/** No stack record: a developer's running `npm start` must not answer for the test stack. */
const noStack = path.join(scratch, 'no-stack.json');

/** Starts `dipper <args>` as a person's shell would, with only the Dipper settings given here (one set to undefined is left out). */
function startDipper(args: string[], settings: Record<string, string | undefined> = {}) {
  const given = Object.entries({ DIPPER_URL: env.gatewayUrl, DIPPER_STACK_FILE: noStack, ...settings }).filter((e): e is [string, string] => e[1] !== undefined);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { cwd: projectRoot, env: cleanEnv(Object.fromEntries(given)) });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString()));
  const closed = new Promise<Ran>((resolve) => child.once('close', (code) => resolve({ code, ...out })));
  return { child, out, closed };
}

function dipper(args: string[], opts: { stdin?: string; env?: Record<string, string | undefined> } = {}): Promise<Ran> {
  const { child, closed } = startDipper(args, opts.env);
  child.stdin.end(opts.stdin ?? '');
  return closed;
}

const asAgent = (token: string) => ({ DIPPER_AGENT_TOKEN: token });
const asOperator = { DIPPER_OPERATOR_TOKEN: env.operatorToken };

/** The official MCP client on the agentteam surface (the support helpers speak beidou only). */
async function agentteamClient(token: string): Promise<Client> {
  const client = new Client({ name: 'exec-test', version: '0.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${env.gatewayUrl}/mcp/agentteam`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

let run: Awaited<ReturnType<typeof startRun>>;
let token: string;
let board: Client;

beforeAll(async () => {
  fs.mkdirSync(scratch, { recursive: true });
  run = await startRun(undefined, 'Try the dipper CLI.');
  token = run.root.token;
  board = await agentteamClient(token);
});

afterAll(async () => {
  await board?.close();
  await closeAll();
});

describe('dipper exec', () => {
  it('answers a read exactly as an MCP client does, on both surfaces', async () => {
    const created = await board.callTool({ name: 'task_create', arguments: { channel: run.runId, tasks: [{ title: 'Compare the CLI with MCP' }] } });
    expect(created.isError).toBeFalsy();
    const [peers, tasks, mcpPeers, mcpTasks] = await Promise.all([
      dipper(['exec', 'beidou', 'list_peers', '-'], { stdin: '{"scope":"all"}', env: asAgent(token) }),
      // Section 3.3's route form, <domain> <action>, names the same tool as `agentteam task_list`.
      dipper(['exec', 'task', 'list', '-', '--compact'], { stdin: JSON.stringify({ channel: run.runId }), env: asAgent(token) }),
      run.root.ok('list_peers', { scope: 'all' }),
      board.callTool({ name: 'task_list', arguments: { channel: run.runId } }),
    ]);
    expect(peers).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(peers.stdout)).toEqual(mcpPeers);
    expect(mcpTasks.isError).toBeFalsy();
    expect(tasks).toMatchObject({ code: 0, stderr: '' });
    expect(tasks.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(tasks.stdout)).toEqual(mcpTasks.structuredContent);
    expect(JSON.parse(tasks.stdout).items.map((t: any) => t.title)).toContain('Compare the CLI with MCP');
  });

  it("finds the gateway and the operator token in the running stack's record", async () => {
    // A record as `npm start` writes it, whose supervisor is this (live) test process.
    const dataDir = path.join(scratch, 'stack-data');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, 'secrets.json'), JSON.stringify({ operatorToken: env.operatorToken, tokenSecret: env.tokenSecret }), { mode: 0o600 });
    const stackFile = path.join(scratch, 'stack.json');
    const record: StackRecord = {
      pid: process.pid,
      pidStart: processStartTime(process.pid),
      startedAt: new Date().toISOString(),
      dataDir,
      host: '127.0.0.1',
      port: Number(new URL(env.gatewayUrl).port),
      gatewayUrl: env.gatewayUrl,
      temporal: { address: env.temporalAddress, namespace: env.namespace, taskQueue: 'dipper', uiUrl: null, bundled: true },
      processes: {},
    };
    writeStackRecord(stackFile, record);
    const fromStack = { DIPPER_URL: undefined, DIPPER_STACK_FILE: stackFile };
    const [peers, runs] = await Promise.all([
      dipper(['exec', 'beidou', 'list_peers', '-'], { stdin: '{}', env: { ...fromStack, ...asAgent(token) } }),
      dipper(['runs'], { env: fromStack }),
    ]);
    expect(peers).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(peers.stdout)).toEqual(await run.root.ok('list_peers', {}));
    expect(runs).toMatchObject({ code: 0, stderr: '' });
    expect(runs.stdout).toMatch(/^RUN +STATUS +AGENTS +AGE +TASK$/m);
    expect(runs.stdout).toMatch(new RegExp(`^${run.runId} +active +\\d+ +\\d+[smhd] +Try the dipper CLI\\.$`, 'm'));
  });

  it("gives a tool's refusal as its structured error on stdout with exit 1, and a refused token as a message that never shows it", async () => {
    const badToken = `not-a-token-${Date.now()}`;
    const refusal = { to: 'ag_000000000000', content: 'anyone there?' };
    const [refused, mcpRefused, unauthorized] = await Promise.all([
      dipper(['exec', 'beidou', 'send_message', '-'], { stdin: JSON.stringify(refusal), env: asAgent(token) }),
      run.root.fail('send_message', refusal),
      dipper(['exec', 'beidou', 'list_peers', '-', '--token', badToken], { stdin: '{}' }),
    ]);
    expect(refused).toMatchObject({ code: EXIT.toolError, stderr: '' });
    expect(JSON.parse(refused.stdout)).toEqual({ error: mcpRefused });
    expect(mcpRefused).toMatchObject({ code: 'unknown_recipient', field: 'to' });

    expect(unauthorized).toMatchObject({ code: EXIT.noCall, stdout: '' });
    expect(unauthorized.stderr).toMatch(/the gateway refused the agent token \(unauthorized: Unauthorized\.\)/);
    expect(unauthorized.stderr).not.toContain(badToken);
  });

  it('exits 2 on usage mistakes, before any call', async () => {
    const [notJson, badOption] = await Promise.all([
      dipper(['exec', 'beidou', 'list_peers', '-'], { stdin: 'scope=all', env: asAgent(token) }),
      dipper(['exec', 'beidou', 'list_peers', '--scope', 'all']),
    ]);
    for (const ran of [notJson, badOption]) expect(ran).toMatchObject({ code: EXIT.usage, stdout: '' });
    expect(notJson.stderr).toContain('stdin is not JSON');
    expect(badOption.stderr).toContain("unknown option '--scope'");
  });

  it("shows a tool's help and schemas from the registry, without a gateway", async () => {
    const offline = { DIPPER_URL: 'http://127.0.0.1:1' };
    const [help, schema] = await Promise.all([
      dipper(['exec', 'agentteam', 'task_list', '--help'], { env: offline }),
      dipper(['exec', 'agentteam', 'task_list', '--output-schema'], { env: offline }),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('task_list (agentteam): List or search tasks');
    expect(help.stdout).toContain('readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false');
    expect(help.stdout).toContain('  channel (string, required)');
    expect(help.stdout).toContain('    filters.assignee (me|none or string)');
    expect(JSON.parse(schema.stdout)).toEqual(toMcpTool(tools.find((t) => t.name === 'task_list')!).outputSchema);
  });

  describe('in process, what needs no gateway', () => {
    // A CLI process costs about a second (loading the registry); the tests above show the command line reaches exec().
    let out = '';
    let err = '';
    beforeEach(() => {
      out = err = '';
      jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
      jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
    });
    afterEach(() => jest.restoreAllMocks());
    const offline = {
      url: () => {
        throw new Error('no call expected');
      },
      commandHelp: () => undefined,
    };

    it.each(tools.map((def) => [def.surface, def.name, def] as const))('prints the schemas of %s %s as MCP publishes them', async (surface, name, def) => {
      expect(await exec(surface, name, undefined, { ...offline, inputSchema: true })).toBe(EXIT.ok);
      expect(JSON.parse(out)).toEqual(toMcpTool(def).inputSchema);
      out = '';
      expect(await exec(surface, name, undefined, { ...offline, outputSchema: true, compact: true })).toBe(EXIT.ok);
      expect(JSON.parse(out)).toEqual(toMcpTool(def).outputSchema);
    });

    it("lists a surface's tools with a line each", async () => {
      expect(await exec('beidou', undefined, undefined, offline)).toBe(EXIT.ok);
      expect(out).toMatch(/^ {2}list_peers +List agents of this task/m);
      expect(out).not.toContain('task_list');
    });

    it('names a task tool by its surface and name or by its route, and the same tool either way', () => {
      expect(findTool('task', 'list')).toBe(findTool('agentteam', 'task_list'));
      expect(findTool('task', 'set_claim')).toBe(findTool('agentteam', 'task_set_claim'));
      expect(findTool('task', 'nope')).toMatch(/^unknown surface "task"/);
    });

    it('refuses, with exit 2, an unknown surface or tool (naming the valid ones) and a call without a token', async () => {
      expect(await exec('nope', 'list_peers', '-', offline)).toBe(EXIT.usage);
      expect(await exec('agentteam', 'task_lst', '-', offline)).toBe(EXIT.usage);
      expect(await exec('beidou', 'list_peers', '-', offline)).toBe(EXIT.usage);
      expect(out).toBe('');
      expect(err).toContain('unknown surface "nope"; the surfaces are: beidou, agentteam');
      expect(err).toMatch(/unknown tool "task_lst" on agentteam; its tools are: task_list, task_get, /);
      expect(err).toContain('no agent token: pass --token or set DIPPER_AGENT_TOKEN');
    });
  });
});

describe('dipper runs and dipper events', () => {
  it('lists the run as JSON and prints its events as NDJSON or readable lines', async () => {
    // The table of `dipper runs` is read in the stack record's test above.
    const [json, ndjson, lines, apiEvents] = await Promise.all([
      dipper(['runs', '--json'], { env: asOperator }),
      dipper(['events', run.runId, '--json'], { env: asOperator }),
      dipper(['events', run.runId, '--limit', '1'], { env: asOperator }),
      operator.events(run.runId),
    ]);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout).runs.find((r: any) => r.run_id === run.runId)).toMatchObject({ status: 'active', task: 'Try the dipper CLI.' });

    expect(ndjson).toMatchObject({ code: 0, stderr: '' });
    const printed = ndjson.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(printed.length).toBeGreaterThan(0);
    // Every event, in the order things happened (the log's own order is per workflow's write).
    const bySeq = new Map(printed.map((e) => [e.seq, e]));
    for (const e of apiEvents) expect(bySeq.get(e.seq)).toEqual(e);
    expect(printed.map((e) => [e.ts, e.seq])).toEqual([...printed].sort((a, b) => a.ts - b.ts || a.seq - b.seq).map((e) => [e.ts, e.seq]));
    expect(printed.every((e) => e.run_id === run.runId)).toBe(true);
    const first = apiEvents[0];
    expect(lines.stdout).toBe(`${first.seq}  ${new Date(first.ts).toISOString()}  ${first.type}  ${first.agent_id ?? '-'}  ${JSON.stringify(first.data).slice(0, 199)}${JSON.stringify(first.data).length > 200 ? '…' : ''}\n`);
  });

  it('follows new events until Ctrl-C', async () => {
    const { child, out, closed } = startDipper(['events', run.runId, '--follow', '--json', '--type', 'plan_declared'], asOperator);
    const until = async (check: () => boolean) => {
      for (let waited = 0; !check(); waited += 50) {
        if (waited > 15_000) throw new Error(`not in time; stdout ${out.stdout}, stderr ${out.stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    try {
      await until(() => out.stderr.includes('Ctrl-C to stop'));
      expect(out.stdout).toBe('');
      await run.root.ok('declare_plan', { tasks: [task('cli')] });
      await until(() => out.stdout.endsWith('\n'));
    } finally {
      // A follower left behind by a failure here would run for ever.
      child.kill('SIGINT');
    }
    const ran = await closed;
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim().split('\n').map((l) => JSON.parse(l).type)).toEqual(['plan_declared']);
  });
});
