import fs from 'node:fs';
import path from 'node:path';
import { agentWorkflowId } from '../../workflows/ids';
import { eventually } from '../support/clients';
import { gatewayCount, updatesSent } from '../support/metrics';
import { connectTemporal } from '../support/temporal';
import { approve, closeAll, connect, env, eventsOf, operator, spawn, startRun, task, waitForInbox } from '../support/team';

afterAll(closeAll);

describe('spawn_agent', () => {
  it('creates the team on the first spawn, then adds members to it', async () => {
    const { root, runId, rootId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b'), task('c', ['a'])] });
    const first = await spawn(root, runId, 'a');
    expect(first.result).toMatchObject({ task_id: 'a', team_created: true, remaining_ready: ['b'] });
    const second = await spawn(root, runId, 'b');
    expect(second.result).toMatchObject({ team_id: first.result.team_id, team_created: false, remaining_ready: [] });

    // The first user message opens with the assignment block, and its artifacts folder exists.
    // It closes with the skills it can give the agents it spawns (agents cannot discover them otherwise).
    expect(first.launch.first_message).toMatch(/^\[TASK ASSIGNMENT\]\nplan_task_id: a\nartifacts_path: (.+)\n\[\/TASK ASSIGNMENT\]\n\nDo a\.\n\n\[SKILLS\]\n.*: ([a-z, -]+)\.\n\[\/SKILLS\]\n\n\[TASK BOARD\]\n.*\n\[\/TASK BOARD\]$/);
    // Other tests may add skills to the shared folder while this runs.
    expect(first.launch.skills).toEqual(expect.arrayContaining(['lead', 'reviewer', 'worker']));
    expect(first.launch.first_message).toContain(`: ${first.launch.skills.join(', ')}.\n[/SKILLS]`);
    // And with the task boards it can use: its run's and its team's.
    expect(first.launch.first_message).toContain(`${runId} (everyone in this run), ${first.result.team_id} (your team).`);
    expect(fs.statSync(first.launch.artifacts_path).isDirectory()).toBe(true);
    expect(path.basename(first.launch.artifacts_path)).toBe('a');

    const peers = await root.ok('list_peers', { scope: 'children' });
    expect(peers.peers.map((p: any) => p.agent_id).sort()).toEqual([first.agentId, second.agentId].sort());
    const all = await first.client.ok('list_peers', { scope: 'all' });
    expect(all.peers.find((p: any) => p.agent_id === rootId).is_leader_of).toEqual([first.result.team_id]);
    const team = await first.client.ok('list_peers');
    expect(team.peers.map((p: any) => p.agent_id).sort()).toEqual([rootId, second.agentId].sort());

    const created = await eventsOf(runId, 'team_created');
    const spawned = await eventsOf(runId, 'agent_spawned', 3);
    expect(created[0].seq).toBeLessThan(spawned.find((e: any) => e.data.agent_id === first.agentId).seq);
  });

  it.each([
    ['unknown_task', 'zz'],
    ['task_not_ready', 'b'],
  ])('refuses with %s', async (code, taskId) => {
    const { root } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a'])] });
    const error = await root.fail('spawn_agent', { task_id: taskId });
    expect(error.code).toBe(code);
    if (code === 'task_not_ready') expect(error.unmet_deps).toEqual(['a']);
  });

  it('refuses without a plan, and a task already in flight', async () => {
    const { root, runId } = await startRun();
    expect((await root.fail('spawn_agent', { task_id: 'a' })).code).toBe('no_active_plan');
    await root.ok('declare_plan', { tasks: [task('a')] });
    await spawn(root, runId, 'a');
    const error = await root.fail('spawn_agent', { task_id: 'a' });
    expect(error).toMatchObject({ code: 'task_not_pending', status: 'in_flight' });
  });

  it('answers once its member runs and is recorded: the caller may spawn again and terminate it at once', async () => {
    const { root } = await startRun();
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    await root.ok('declare_plan', { tasks: ids.map((id) => task(id)) });
    const asked = await updatesSent(env.gatewayUrl, 'spawnOutcome');
    const made: string[] = [];
    // Back to back: the leader's spawn lock is free before each answer, so none is refused as concurrent.
    for (const id of ids) made.push((await root.ok('spawn_agent', { task_id: id })).agent_id);
    for (const agentId of made) expect(await root.ok('terminate_child', { agent_id: agentId, force: true })).toEqual({ sentinel_posted: true });
    // Answered from the step's word: with the word lost, each spawn would ask its leader how it ended (spawnOutcome).
    expect((await updatesSent(env.gatewayUrl, 'spawnOutcome')) - asked).toBeLessThan(ids.length);
  });

  it('refuses a second spawn while one is in flight', async () => {
    const { root } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b')] });
    const [x, y] = await Promise.all([root.call('spawn_agent', { task_id: 'a' }), root.call('spawn_agent', { task_id: 'b' })]);
    const outcomes = [x, y].map((o) => (o.isError ? o.error!.code : 'ok')).sort();
    expect(outcomes).toEqual(['concurrent_spawn', 'ok']);
  });

  it('refuses past the depth limit, and the plan stays spawnable', async () => {
    const { root, runId } = await startRun({ max_depth: 1 });
    await root.ok('declare_plan', { tasks: [task('a', [], 'lead')] });
    const lead = await spawn(root, runId, 'a');
    await lead.client.ok('declare_plan', { tasks: [task('x')] });
    const error = await lead.client.fail('spawn_agent', { task_id: 'x' });
    expect(error).toMatchObject({ code: 'depth_exceeded', depth: 2, max_depth: 1 });
    expect(await lead.client.ok('list_ready')).toEqual({ ready: ['x'] });
  });

  it('warns when a team lands deeper than six levels', async () => {
    const { root, runId } = await startRun();
    let leader = root;
    const ids: string[] = [];
    for (let depth = 1; depth <= 7; depth++) {
      await leader.ok('declare_plan', { tasks: [task(`level${depth}`, [], 'lead')] });
      const member = await spawn(leader, runId, `level${depth}`);
      ids.push(member.agentId);
      leader = member.client;
    }
    const warnings = await eventsOf(runId, 'depth_warning');
    expect(warnings.map((e: any) => [e.data.agent_id, e.data.depth])).toEqual([[ids[6], 7]]);
  });

  it('reports unknown_skill when the skill vanished after declare_plan, and the task stays ready', async () => {
    const skillDir = path.join(env.skillsDir, 'ephemeral');
    fs.mkdirSync(skillDir, { recursive: true });
    fs.writeFileSync(path.join(skillDir, 'SKILL.md'), 'Short-lived skill.');
    const { root } = await startRun();
    try {
      await root.ok('declare_plan', { tasks: [task('a', [], 'ephemeral')] });
    } finally {
      fs.rmSync(skillDir, { recursive: true, force: true });
    }
    expect((await root.fail('spawn_agent', { task_id: 'a' })).code).toBe('unknown_skill');
    expect(await root.ok('list_ready')).toEqual({ ready: ['a'] });
  });
});

describe('team workspaces', () => {
  it('tell the leader once when a team outgrows its workspace budget', async () => {
    const { root, runId } = await startRun({ workspace_budget_bytes: 1000, workspace_check_seconds: 1 });
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    fs.writeFileSync(path.join(child.launch.artifacts_path, 'big.bin'), Buffer.alloc(4000));
    const events = await eventsOf(runId, 'workspace_over_budget');
    expect(events[0].data).toMatchObject({ team_id: child.result.team_id, budget: 1000 });
    expect(events[0].data.bytes).toBeGreaterThanOrEqual(4000);
    const notice = await waitForInbox(root, (m) => m.kind === 'system' && m.content.startsWith('[WORKSPACE OVER BUDGET]'));
    expect(notice.content).toContain(child.result.team_id);
    // The positive sign that checks went on after the report: a second team past its budget is reported too. Had the
    // first team's report not been kept, the round that found the second would have reported the first again.
    const second = await root.ok('create_team', { name: 'second', task: 'More work.', roles: [{ role: 'helper', skill: 'worker', description: 'Helps.' }] });
    fs.writeFileSync(path.join((await operator.launch(runId, second.members[0].agent_id)).workspace_path, 'big.bin'), Buffer.alloc(4000));
    const both = await eventsOf(runId, 'workspace_over_budget', 2);
    expect(both.map((e) => e.data.team_id).sort()).toEqual([child.result.team_id, second.team_id].sort());
    expect(await operator.events(runId, 'workspace_over_budget')).toHaveLength(2);
  });

  it("leave an idle leader's history still while they are watched", async () => {
    const { root, runId, rootId } = await startRun({ workspace_budget_bytes: 1000, workspace_check_seconds: 1 });
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    const temporal = await connectTemporal();
    try {
      const handle = temporal.client.workflow.getHandle(agentWorkflowId(runId, rootId));
      // The positive sign: one watching activity has started, and measures every second from now on.
      const watch = await eventually(async () => {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        return pending.find((a) => a.activityType?.name === 'watchWorkspaces' && a.lastStartedTime) ?? undefined;
      });
      // The spawn's events are written (a timer, an activity, a memo in this history): what follows is idle.
      await eventsOf(runId, 'task_spawned');
      const idleFrom = (await handle.describe()).historyLength;
      // Five checks' time with nothing to report: before, each check was an activity and a timer in this history.
      await new Promise((r) => setTimeout(r, 5000));
      const after = await handle.describe();
      // At most the tail of the spawn's own event write (its workflow task and memo); five checks the old way were over 25 events.
      expect(after.historyLength - idleFrom).toBeLessThanOrEqual(5);
      expect(after.raw.pendingActivities?.map((a) => String(a.scheduledTime?.seconds))).toEqual([String(watch.scheduledTime?.seconds)]);
      // And it was watching all along: a team past its budget is reported within a check or two.
      fs.writeFileSync(path.join(child.launch.artifacts_path, 'big.bin'), Buffer.alloc(4000));
      expect((await eventsOf(runId, 'workspace_over_budget'))[0].data.team_id).toBe(child.result.team_id);
    } finally {
      await temporal.close();
    }
  });
});

describe('terminate_child', () => {
  it('approves a child under review: sentinel posted, task done, dependents ready', async () => {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a'])] });
    const child = await spawn(root, runId, 'a');
    expect((await root.fail('terminate_child', { agent_id: child.agentId })).code).toBe('child_not_pending_review');
    await approve(root, child);
    // Approval answers the review: it is no longer pending.
    expect(await root.ok('list_pending_reviews')).toEqual({ items: [] });
    expect(await root.ok('list_ready')).toEqual({ ready: ['b'] });
    expect((await root.fail('terminate_child', { agent_id: child.agentId })).code).toBe('already_terminating');
    const ready = await eventsOf(runId, 'task_ready');
    expect(ready[0].data.task_id).toBe('b');
    await eventsOf(runId, 'task_done');
    // The directory hears of the status change from the child's workflow shortly after the acknowledgement.
    await eventually(async () => {
      const peers = await root.ok('list_peers', { scope: 'children' });
      return peers.peers[0].status === 'terminated' ? true : undefined;
    });
  });

  it('force-terminates without a review, audits it and fails the task', async () => {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a'), task('b', ['a'])] });
    const child = await spawn(root, runId, 'a');
    expect(await root.ok('terminate_child', { agent_id: child.agentId, force: true })).toEqual({ sentinel_posted: true });
    const forced = await eventsOf(runId, 'terminate.forced');
    expect(forced[0].data).toMatchObject({ reason: 'leader_force', target: child.agentId });
    await eventsOf(runId, 'task_failed');
    expect(await root.ok('list_ready')).toEqual({ ready: [] });
  });

  it('accepts a child that requested termination', async () => {
    const { root, runId } = await startRun();
    await root.ok('declare_plan', { tasks: [task('a')] });
    const child = await spawn(root, runId, 'a');
    await child.client.ok('request_termination', { detail: 'all done' });
    await waitForInbox(root, (m) => m.kind === 'termination_request' && m.from === child.agentId);
    expect(await root.ok('terminate_child', { agent_id: child.agentId })).toEqual({ sentinel_posted: true });
  });

  it('refuses unknown agents and agents the caller does not lead directly', async () => {
    const { root, runId } = await startRun();
    expect((await root.fail('terminate_child', { agent_id: 'ag_000000000000' })).code).toBe('unknown_agent');
    await root.ok('declare_plan', { tasks: [task('a', [], 'lead')] });
    const lead = await spawn(root, runId, 'a');
    await lead.client.ok('declare_plan', { tasks: [task('x')] });
    const grandchild = await spawn(lead.client, runId, 'x');
    expect((await root.fail('terminate_child', { agent_id: grandchild.agentId, force: true })).code).toBe('not_leader');
    expect((await grandchild.client.fail('terminate_child', { agent_id: lead.agentId, force: true })).code).toBe('not_leader');
  });
});

describe('create_team (deprecated)', () => {
  const roles = [
    { role: 'frontend', skill: 'worker', description: 'Build the page.' },
    { role: 'backend', skill: 'worker', description: 'Build the API.' },
  ];

  /** This gateway's count of create_team calls (section 11.3 usage telemetry). */
  const deprecatedCount = () => gatewayCount(env.gatewayUrl, 'dipper_deprecated_tool_calls_total', 'tool="create_team"');

  it('spawns one member per role; each receives the originating user task', async () => {
    const { root, runId, rootId } = await startRun(undefined, 'Make a todo app.');
    const counted = await deprecatedCount();
    const raw = await root.mcp.callTool({ name: 'create_team', arguments: { name: 'app', task: 'coordinate the app', roles } });
    expect(await deprecatedCount()).toBe(counted + 1);
    // A normal result, with the replacement named beside it (section 11.3).
    expect(raw.isError).not.toBe(true);
    expect(raw._meta).toEqual({ deprecated: { replacement: 'declare_plan + spawn_agent' } });
    const team = raw.structuredContent as { members: { agent_id: string; role: string }[] };
    expect(team.members.map((m: any) => m.role)).toEqual(['frontend', 'backend']);
    const launch = await operator.launch(runId, team.members[0].agent_id);
    expect(launch.first_message.split('\n\n[SKILLS]')[0]).toBe('Make a todo app.');
    expect(launch.skill_body).toContain('Build the page.');
    const member = await connect(launch.token);
    const peers = await member.ok('list_peers');
    expect(peers.peers.map((p: any) => p.agent_id).sort()).toEqual([rootId, team.members[1].agent_id].sort());
  });

  it('refuses a leader_id and identical descriptions unless consensus', async () => {
    const { root } = await startRun();
    const leaderOverride = await root.fail('create_team', { name: 't', task: 'x', roles, leader_id: 'ag_000000000000' });
    expect(leaderOverride.code).toBe('leader_override_attempted');
    const same = [roles[0], { ...roles[0], role: 'frontend-2' }];
    expect((await root.fail('create_team', { name: 't', task: 'x', roles: same })).code).toBe('duplicate_member_descriptions');
    const ok = await root.ok('create_team', { name: 't', task: 'x', roles: same, consensus: true });
    expect(ok.members).toHaveLength(2);
  });

  it('refuses a task, rules or descriptions past their sizes, naming the field, and creates nothing', async () => {
    const { root } = await startRun();
    const big = 'x'.repeat(256 * 1024 + 1);
    const cases: [object, string][] = [
      [{ task: big }, 'task'],
      [{ rules: Array(5).fill('r'.repeat(16 * 1024)) }, 'rules'],
      [{ roles: [{ ...roles[0], description: big }] }, 'roles[0].description'],
    ];
    for (const [change, field] of cases) {
      const refused = await root.fail('create_team', { name: 't', task: 'x', roles, ...change });
      expect([field, refused.code, refused.field]).toEqual([field, 'invalid_input', field]);
    }
    expect((await root.ok('list_peers', { scope: 'children' })).peers).toEqual([]);
  });

  it('refuses unknown skills, the depth limit, and a concurrent create_team', async () => {
    const { root } = await startRun({ max_depth: 0 });
    const badSkill = await root.fail('create_team', { name: 't', task: 'x', roles: [{ ...roles[0], skill: 'nope' }] });
    // It names the skills that exist, so the agent can pick one.
    expect(badSkill).toMatchObject({ code: 'unknown_skill', field: 'roles[0].skill', available: ['crasher', 'lead', 'reviewer', 'thrifty', 'worker'] });
    expect(badSkill.message).toContain('Skills here: crasher, lead, reviewer, thrifty, worker.');
    expect((await root.fail('create_team', { name: 't', task: 'x', roles })).code).toBe('depth_exceeded');

    const other = await startRun();
    const calls = await Promise.all([
      other.root.call('create_team', { name: 't1', task: 'x', roles }),
      other.root.call('create_team', { name: 't2', task: 'y', roles }),
    ]);
    expect(calls.map((o) => (o.isError ? o.error!.code : 'ok')).sort()).toEqual(['concurrent_create_team', 'ok']);
  });
});

