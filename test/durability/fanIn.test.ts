import { eventually } from '../support/clients';
import { closeAll, connect, operator, startRun } from '../support/team';

afterAll(closeAll);

describe('a hot recipient', () => {
  it('takes 50 messages sent at the same moment by 50 agents, every one delivered once', async () => {
    const { root, runId, rootId } = await startRun();
    const roles = Array.from({ length: 50 }, (_, i) => ({ role: `sender-${i}`, skill: 'worker', description: `Sender number ${i}.` }));
    const team = await root.ok('create_team', { name: 'senders', task: 'flood the leader', roles });
    const senders = await Promise.all(
      team.members.map(async (m: any) => connect((await operator.launch(runId, m.agent_id)).token)),
    );

    const results = await Promise.all(senders.map((s, i) => s.call('send_message', { to: rootId, content: `report ${i}` })));
    const failures = results.filter((r) => r.isError).map((r) => r.text);
    expect(failures).toEqual([]);
    const sentIds = new Set(results.map((r) => r.data.message_id));
    expect(sentIds.size).toBe(50);

    const inbox = await eventually(async () => {
      const view = await root.inbox(0, 0);
      return view.messages.length >= 50 ? view : undefined;
    });
    const delivered = inbox.messages.map((m) => m.message_id);
    expect(new Set(delivered)).toEqual(sentIds);
    expect(delivered).toHaveLength(50);
  });
});
