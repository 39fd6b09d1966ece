import { Directory } from '../../workflows/run/directory';
import type { PeerEntry } from '../../workflows/types';

function entry(agent_id: string, team_id: string | null, leader_id: string | null, is_leader_of: string[] = []): PeerEntry {
  return { agent_id, name: `${agent_id}-name`, role: `${agent_id}-role`, team_id, leader_id, status: 'active', is_leader_of, depth: 0 };
}

/**
 * root leads t1 = {a1, a2}; a1 leads t2 = {b1, b2}; b1 leads t3 = {c1}.
 */
function graph(): Directory {
  const d = new Directory({});
  for (const e of [
    entry('root', null, null, ['t1']),
    entry('a1', 't1', 'root', ['t2']),
    entry('a2', 't1', 'root'),
    entry('b1', 't2', 'a1', ['t3']),
    entry('b2', 't2', 'a1'),
    entry('c1', 't3', 'b1'),
  ]) {
    d.apply({ agent_id: e.agent_id, entry: e });
  }
  return d;
}

const ids = (rows: { agent_id: string }[]) => rows.map((r) => r.agent_id).sort();

describe('Directory.peers', () => {
  it.each([
    ['root', 'team', ['a1', 'a2']],
    ['root', 'children', ['a1', 'a2']],
    ['a1', 'team', ['a2', 'root']],
    ['a1', 'children', ['b1', 'b2']],
    ['b2', 'team', ['a1', 'b1']],
    ['b2', 'children', []],
    ['b1', 'children', ['c1']],
    ['c1', 'team', ['b1']],
  ] as const)('%s with scope %s sees %j', (caller, scope, expected) => {
    expect(ids(graph().peers(caller, scope))).toEqual([...expected].sort());
  });

  it('scope all is the whole task graph, the caller included', () => {
    const d = graph();
    for (const caller of ['root', 'a2', 'c1']) expect(ids(d.peers(caller, 'all'))).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'root']);
  });

  it('returns list_peers rows, without routing facts such as leader_id and depth', () => {
    const [row] = graph().peers('c1', 'team');
    expect(row).toEqual({ agent_id: 'b1', role: 'b1-role', team_id: 't2', status: 'active', is_leader_of: ['t3'], name: 'b1-name' });
  });

  it('sees nothing for an unknown caller except scope all', () => {
    const d = graph();
    expect(d.peers('ghost', 'team')).toEqual([]);
    expect(d.peers('ghost', 'children')).toEqual([]);
    expect(d.peers('ghost', 'all')).toHaveLength(6);
  });

  it('shows a lone root nothing for team and itself for all', () => {
    const d = new Directory({});
    d.apply({ agent_id: 'root', entry: entry('root', null, null) });
    expect(d.peers('root', 'team')).toEqual([]);
    expect(ids(d.peers('root', 'all'))).toEqual(['root']);
  });
});

describe('Directory.apply', () => {
  it('registers once and ignores a repeated registration', () => {
    const d = graph();
    d.apply({ agent_id: 'a2', entry: { ...entry('a2', 't9', 'b2'), status: 'terminated' } });
    expect(d.get('a2')).toMatchObject({ team_id: 't1', leader_id: 'root', status: 'active' });
    expect(d.size).toBe(6);
  });

  it('patches a known agent, and the change shows in list_peers', () => {
    const d = graph();
    d.apply({ agent_id: 'b2', patch: { status: 'review_pending' } });
    d.apply({ agent_id: 'b2', patch: { is_leader_of: ['t4'] } });
    expect(d.get('b2')).toMatchObject({ status: 'review_pending', is_leader_of: ['t4'], team_id: 't2' });
    expect(d.peers('a1', 'children').find((r) => r.agent_id === 'b2')).toMatchObject({ status: 'review_pending' });
  });

  it('drops a patch for an agent it does not know', () => {
    const d = graph();
    d.apply({ agent_id: 'ghost', patch: { status: 'terminated' } });
    expect(d.get('ghost')).toBeNull();
    expect(d.size).toBe(6);
  });
});

describe('Directory.apply', () => {
  it('takes status from whoever tells it, but a late word never brings a terminated agent back', () => {
    const d = graph();
    d.apply({ agent_id: 'a2', patch: { status: 'review_pending' } });
    d.apply({ agent_id: 'a2', patch: { status: 'terminating' } });
    d.apply({ agent_id: 'a2', patch: { status: 'terminated' } });
    d.apply({ agent_id: 'a2', patch: { status: 'terminating', is_leader_of: ['t9'] } });
    expect(d.get('a2')).toMatchObject({ status: 'terminated', is_leader_of: ['t9'] });
    d.apply({ agent_id: 'a1', patch: { status: 'review_pending' } });
    d.apply({ agent_id: 'a1', patch: { status: 'active' } });
    expect(d.get('a1')?.status).toBe('active');
  });
});
