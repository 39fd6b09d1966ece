import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/clients';
import { referenceRuntime, startStack, type Stack } from '../support/stack';

let stack: Stack;
const pidsToKill = new Set<number>();
beforeAll(async () => {
  stack = await startStack('supervise', 28750, { DIPPER_RUNTIMES: JSON.stringify({ default: referenceRuntime }) });
});
afterAll(async () => {
  for (const pid of pidsToKill) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await stack?.stop();
});

/**
 * Runtime processes on this machine that run the given agent: the reference
 * runtime with the agent's id in its environment (helpers it starts, such as
 * the TypeScript loader's esbuild service, inherit the environment and do not count).
 */
function processesOf(agentId: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const env = fs.readFileSync(`/proc/${p}/environ`, 'utf8').split('\0');
        const cmd = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
        return env.includes(`DIPPER_AGENT_ID=${agentId}`) && cmd.includes('reference-runtime.js');
      } catch {
        return false;
      }
    })
    .map(Number);
}

function pidFile(runId: string, agentId: string): string {
  return path.join(stack.env.DIPPER_DATA_DIR, 'runs', runId, 'agents', agentId, 'runtime.pid');
}

async function livePid(runId: string, agentId: string, not?: number): Promise<number> {
  return eventually(async () => {
    const pid = fs.existsSync(pidFile(runId, agentId)) ? Number(fs.readFileSync(pidFile(runId, agentId), 'utf8').split(' ')[0]) : 0;
    return pid && pid !== not && processesOf(agentId).includes(pid) ? pid : undefined;
  }, 60_000);
}

describe('command runtime supervision', () => {
  it('keeps one process per agent across a worker restart, and restarts a crashed one', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Write a result.', root_skill: 'worker' })).json;
    const agentId: string = run.root.agent_id;
    const first = await livePid(run.run_id, agentId);
    pidsToKill.add(first);
    // The runtime is up and working: its review reached the human.
    await eventually(async () => {
      const view = await stack.operator.request('GET', `/runs/${run.run_id}`);
      return view.json.pending_root.length > 0 ? true : undefined;
    });

    await stack.restartWorker('SIGKILL');
    await new Promise((r) => setTimeout(r, 3000));
    expect(processesOf(agentId)).toEqual([first]);

    // The process dies under the new worker: its exit reaches the workflow, which starts it again (resume).
    process.kill(first, 'SIGKILL');
    const second = await livePid(run.run_id, agentId, first);
    pidsToKill.add(second);
    expect(processesOf(agentId)).toEqual([second]);
    const crashed = await eventually(async () => {
      const res = await stack.operator.request('GET', `/runs/${run.run_id}/events?type=agent_crashed`);
      return res.json.events.length > 0 ? res.json.events : undefined;
    });
    expect(crashed[0]).toMatchObject({ agent_id: agentId, data: { crashes: 1, signal: null } });
    const started = await eventually(async () => {
      const res = await stack.operator.request('GET', `/runs/${run.run_id}/events?type=agent_started`);
      return res.json.events.length >= 2 ? res.json.events : undefined;
    });
    expect(started.map((e: any) => e.data.mode)).toEqual(['first', 'resume']);
  }, 120_000);
});
