import { TaskApiClient } from '../../src/common/taskApi/client';
import { taskApiUrl, type DipperConfig } from '../../src/config';
import { expectEqual, sequential, type BenchContext } from '../measure';

/**
 * The task board: a read and a change, each straight from the gateway to
 * the Task API, and the same read made directly from this process (no MCP)
 * as the Task API's own floor. Changes went through a short workflow until
 * issue 40 (99.9 ms at f4c909b, docs/performance.md).
 */
export async function taskBoardScenario(ctx: BenchContext, config: DipperConfig): Promise<void> {
  const viaMcp = ctx.row('task_get (read straight from the gateway)', ['noop']);
  const create = ctx.row('task_create (one task)', ['noop']);
  const direct = ctx.row('Task API read, direct (no MCP)', []);

  const res = await ctx.agents.operator.request('POST', '/runs', { task: 'Benchmark the task board.', limits: { idle_watchdog_seconds: 0 } });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  const runId: string = res.json.run_id;
  const agentId: string = res.json.root.agent_id;
  const tasks = await ctx.agents.connect('agentteam', agentId, res.json.root.agent_token);
  const made = await tasks.call<{ tasks: { number: number }[] }>('task_create', { channel: runId, tasks: [{ title: 'Benchmark task', description: 'x'.repeat(500) }] });
  const number = made.tasks[0].number;

  await sequential(viaMcp, ctx.counts.warmup, ctx.counts.query, async () => {
    const out = await tasks.call<{ task: { number: number } }>('task_get', { channel: runId, number });
    expectEqual('task read', out.task.number, number);
  });
  await sequential(create, ctx.counts.warmup, ctx.counts.spawn, (i) => tasks.call('task_create', { channel: runId, tasks: [{ title: `Created ${i}` }] }));

  const api = new TaskApiClient({
    baseUrl: taskApiUrl(config),
    workspace: config.taskApi.workspace,
    adminKey: config.taskApi.adminKey!,
    requestTimeoutMs: config.taskApi.requestTimeoutMs,
  });
  const read = { op: 'get' as const, agentId, channels: [runId], body: { channel: runId, number } };
  await sequential(direct, ctx.counts.warmup, ctx.counts.query, async () => {
    const out = await api.request({ op: read.op, agent: { agentId, channels: read.channels }, body: read.body });
    if (!out.ok) throw new Error(out.error.code);
  });
}
