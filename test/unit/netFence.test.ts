import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { destinationsOf, fenced, fenceScript, fenceTable, putUpFence } from '../../activities/runtimes/netFence';
import { refuseClaimed, resolveAutoUsers } from '../../activities/runtimes/uidClaims';
import { parseDestination } from '../../src/common/destination';
import { loadConfig } from '../../src/config';

const runtimes = (extra: object) => JSON.stringify({ default: { kind: 'command', command: ['agent'], ...extra } });

describe('agent network fence', () => {
  it('reads the destinations an operator writes, and nothing else', () => {
    expect(parseDestination('api.example.com:443')).toEqual({ host: 'api.example.com', port: 443 });
    expect(parseDestination('10.1.2.3')).toEqual({ host: '10.1.2.3' });
    expect(parseDestination('10.0.0.0/8')).toEqual({ host: '10.0.0.0', prefix: 8 });
    expect(parseDestination('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseDestination('fd00::/8')).toEqual({ host: 'fd00::', prefix: 8 });
    expect(parseDestination('::1')).toEqual({ host: '::1' });
    for (const bad of ['host:0', 'host:65536', '10.0.0.0/33', '[nothost]:80', 'a b', '', 'http://x:80', '1.2.3.4/8:80']) expect([bad, parseDestination(bad)]).toEqual([bad, null]);
  });

  it('refuses a malformed network setting at start, naming the entry', () => {
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ network: 'open' }) })).toThrow(/network applies to a runtime with user/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', network: 'closed' }) })).toThrow(/network must be "open" or/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', network: { allow: 'x:1' } }) })).toThrow(/network must be "open" or/);
    expect(() => loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', network: { allow: ['ok:1', 'bad:99999'] } }) })).toThrow(/entry "bad:99999"/);
    const config = loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', network: { allow: ['10.0.0.0/8'] } }) });
    expect(fenced(config.runtimes.default)).toBe(true);
    expect(fenced(loadConfig({ DIPPER_RUNTIMES: runtimes({ user: '3000000-3000999', network: 'open' }) }).runtimes.default)).toBe(false);
    expect(fenced(loadConfig({ DIPPER_RUNTIMES: runtimes({}) }).runtimes.default)).toBe(false);
  });

  it('lets agents reach the gateway at its port, and resolvers only when a name needs them', async () => {
    const choice = { kind: 'command' as const, user: '3000000-3000999', network: { allow: ['[::1]:9000', '192.168.0.0/16'] } };
    expect(await destinationsOf(choice, 'http://127.0.0.1:8710')).toEqual([
      { address: '127.0.0.1', port: 8710 },
      { address: '::1', port: 9000 },
      { address: '192.168.0.0', prefix: 16, port: undefined },
    ]);
    expect(await destinationsOf({ ...choice, network: undefined }, 'https://[::1]')).toEqual([{ address: '::1', port: 443 }]);
    const named = await destinationsOf({ ...choice, network: undefined }, 'http://localhost:8710');
    expect(named.filter((d) => d.port === 8710).map((d) => d.address)).toContain('127.0.0.1');
    // A name is looked up by the agent too, so the host's resolvers (if it lists any) are let through on port 53.
    expect(named.filter((d) => d.port !== 8710).every((d) => d.port === 53)).toBe(true);
  });

  it('writes one table that it replaces whole, a chain per runtime, refusing everything not allowed', () => {
    const script = fenceScript('dipper_abc', [
      { uids: '3000000-3000999', allow: [{ address: '127.0.0.1', port: 8710 }, { address: 'fd00::', prefix: 8 }] },
      { uids: '998', allow: [{ address: '127.0.0.1', port: 8710 }] },
    ]);
    const lines = script.trim().split('\n').map((l) => l.trim());
    // Created if missing, then deleted and written again in the same transaction: no moment without a fence.
    expect(lines.slice(0, 3)).toEqual(['table inet dipper_abc {}', 'delete table inet dipper_abc', 'table inet dipper_abc {']);
    expect(lines).toContain('meta skuid 3000000-3000999 jump agents_0');
    expect(lines).toContain('meta skuid 998 jump agents_1');
    // Judged by where a connection was headed before any NAT (Docker's DNS, a service address).
    expect(lines).toContain('ct original ip daddr 127.0.0.1 meta l4proto { tcp, udp } ct original proto-dst 8710 accept');
    expect(lines).toContain('ct original ip6 daddr fd00::/8 accept');
    expect(lines.filter((l) => l === 'reject with icmpx type admin-prohibited')).toHaveLength(2);
    expect(fenceTable('/var/lib/dipper')).toMatch(/^dipper_[0-9a-f]{12}$/);
    expect(fenceTable('/var/lib/dipper')).not.toBe(fenceTable('/var/lib/dipper2'));
  });

  // As root with nft (CI installs it, as the accounts test needs): the table goes up, and comes down when set open.
  it('takes its table down when no runtime is fenced any more, and refuses runtimes whose users overlap', async () => {
    const dataDir = `/tmp/dipper-fence-unit-${process.pid}`;
    const table = fenceTable(dataDir);
    const up = () => {
      try {
        execFileSync('nft', ['list', 'table', 'inet', table], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    };
    const worker = { kind: 'command' as const, command: ['agent'], user: '3300000-3300999' };
    try {
      expect(await putUpFence([worker], 'http://127.0.0.1:8710', dataDir)).toBe(table);
      expect(up()).toBe(true);
      expect(await putUpFence([{ ...worker, network: 'open' as const }], 'http://127.0.0.1:8710', dataDir)).toBeNull();
      expect(up()).toBe(false);
    } finally {
      if (up()) execFileSync('nft', ['delete', 'table', 'inet', table]);
    }
    await expect(putUpFence([worker, { ...worker, user: '3300500-3301500' }], 'http://127.0.0.1:8710', dataDir)).rejects.toThrow(/overlap/);
    expect(up()).toBe(false);
  });

  it('gives "auto" runtimes ranges of their own, kept once chosen, past any range another fence claims', () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-auto-uids-'));
    const runtimes = () => ({ default: { kind: 'command' as const, user: 'auto' as string }, bySkill: { writer: { kind: 'command' as const, user: 'auto' as string } } });
    const first = runtimes();
    resolveAutoUsers(first, dataDir, []);
    const mine = [first.default.user, first.bySkill.writer.user].map((u) => u.split('-').map(Number));
    for (const [lo, hi] of mine) expect(hi - lo).toBe(99_999);
    expect(mine[0][1] < mine[1][0] || mine[1][1] < mine[0][0]).toBe(true);
    // Chosen once: a later start keeps them even where another fence now claims one (the fence then refuses, naming it).
    const again = runtimes();
    resolveAutoUsers(again, dataDir, [{ table: 'dipper_other', first: mine[0][0], last: mine[0][0], dataDir: '/elsewhere' }]);
    expect([again.default.user, again.bySkill.writer.user]).toEqual([first.default.user, first.bySkill.writer.user]);
    expect(refuseClaimed([again.default.user], [{ table: 'dipper_other', first: mine[0][0], last: mine[0][0], dataDir: '/elsewhere' }])).toMatch(/nft table dipper_other, the data folder \/elsewhere/);
    // A data folder whose first pick another fence holds steps past it.
    const other = path.join(dataDir, 'other');
    const pick = runtimes();
    resolveAutoUsers(pick, other, []);
    fs.rmSync(path.join(other, 'host-ids'), { recursive: true });
    const [pickLo, pickHi] = pick.default.user.split('-').map(Number);
    const stepped = runtimes();
    resolveAutoUsers(stepped, other, [{ table: 'dipper_other', first: pickLo + 5, last: pickLo + 5, dataDir: '/elsewhere' }]);
    const [lo, hi] = stepped.default.user.split('-').map(Number);
    expect(hi < pickLo || lo > pickHi).toBe(true);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
});
