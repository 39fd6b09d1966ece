import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HostIds, parseRange } from '../../activities/runtimes/hostIds';
import { checkAccountsSupport } from '../../activities/runtimes/accounts';
import { groupId, userId } from '../../activities/runtimes/osAccounts';
import { isolatesAgents, loadConfig } from '../../src/config';

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-ids-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('host ids', () => {
  it('gives a key the same id every time, and two keys never one id', () => {
    const ids = new HostIds(tempDir(), { first: 100, last: 104 });
    const taken = ['a', 'b', 'c', 'd', 'e'].map((k) => ids.idFor(k));
    expect(new Set(taken).size).toBe(5);
    expect(taken.every((id) => id >= 100 && id <= 104)).toBe(true);
    expect(['a', 'b', 'c', 'd', 'e'].map((k) => ids.idFor(k))).toEqual(taken);
    expect(() => ids.idFor('f')).toThrow(/every id of 100-104 is taken/);
  });

  it('agrees across instances sharing a folder (two workers of one host), and leaves no drafts', () => {
    const dir = tempDir();
    const one = new HostIds(dir, { first: 1, last: 1000 });
    const two = new HostIds(dir, { first: 1, last: 1000 });
    const keys = Array.from({ length: 50 }, (_, i) => `team:${i}`);
    const first = keys.map((k, i) => (i % 2 ? one : two).idFor(k));
    expect(keys.map((k) => one.idFor(k))).toEqual(first);
    expect(new Set(first).size).toBe(50);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.draft'))).toEqual([]);
  });

  it('reads ranges that never include root or the kernel\'s "no id"', () => {
    expect(parseRange('3000000-3000999')).toEqual({ first: 3_000_000, last: 3_000_999 });
    for (const bad of ['0-10', '10-5', '1-4294967295', 'a-b', '12']) expect([bad, parseRange(bad)]).toEqual([bad, null]);
  });
});

describe('runtime accounts', () => {
  const runtimes = (choice: object) => JSON.stringify({ default: { kind: 'command', command: ['x'], ...choice } });

  it('are checked when the configuration loads', () => {
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: 'root' }) })).toThrow(/must not be root/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: 0 }) })).toThrow(/user must be/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: 'a b' }) })).toThrow(/user must be/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ group: 'staff' }) })).toThrow(/required with group/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'webhook', url: 'http://x', user: 'agent' } }) })).toThrow(/kinds "command" and "claude" only/);
    const config = loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', group: 'nogroup' }) });
    expect(isolatesAgents(config.runtimes)).toBe(true);
    expect(isolatesAgents(loadConfig({ DIPPER_RUNTIMES: runtimes({}) }).runtimes)).toBe(false);
  });

  it('name users and groups by /etc/passwd and /etc/group, or by number', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'passwd'), 'root:x:0:0::/root:/bin/sh\nagent:x:1234:1234::/nonexistent:/usr/sbin/nologin\n');
    fs.writeFileSync(path.join(dir, 'group'), 'tools:x:4321:\n');
    expect(userId('agent', path.join(dir, 'passwd'))).toBe(1234);
    expect(userId('nobody-here', path.join(dir, 'passwd'))).toBeNull();
    expect(userId(77, path.join(dir, 'passwd'))).toBe(77);
    expect(groupId('tools', path.join(dir, 'group'))).toBe(4321);
  });

  it('are refused at worker start when agents could not reach the data folder, or the account does not exist', () => {
    const closed = tempDir(); // mkdtemp makes it 0700: nobody else may pass
    const choice = { kind: 'command' as const, command: ['x'], user: '3000000-3000009' };
    expect(() => checkAccountsSupport([choice], '2000000000-2000000099', path.join(closed, 'data'))).toThrow(/cannot pass through .*chmod o\+x/);
    fs.chmodSync(closed, 0o711);
    expect(checkAccountsSupport([choice], '2000000000-2000000099', path.join(closed, 'data'))).toEqual({ first: 2_000_000_000, last: 2_000_000_099 });
    expect(() => checkAccountsSupport([{ ...choice, user: 'no-such-user-here' }], '2000000000-2000000099', path.join(closed, 'data'))).toThrow(/does not exist/);
    expect(() => checkAccountsSupport([choice], '0-10', path.join(closed, 'data'))).toThrow(/DIPPER_AGENT_GROUP_IDS/);
  });
});
