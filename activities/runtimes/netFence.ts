import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import dns from 'node:dns/promises';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { RuntimeChoice } from '../../src/config';
import { parseDestination } from '../../src/common/destination';
import { parseRange } from './hostIds';
import { userId } from './osAccounts';
import { CLAIM_PREFIX, fenceClaims, refuseClaimed } from './uidClaims';

/** One place an agent may open a connection to: an address or a network, and a port or any. */
export interface Destination {
  address: string;
  /** Prefix length of a network; absent for one address. */
  prefix?: number;
  port?: number;
}

/** The fence cannot be put up: said once at worker start, like a missing setpriv. */
export class FenceProblem extends Error {}

/** The agents' user numbers as nft writes them: one number or "first-last". */
export function uidsOf(choice: RuntimeChoice): string {
  const range = typeof choice.user === 'string' ? parseRange(choice.user) : null;
  if (range) return `${range.first}-${range.last}`;
  const uid = userId(choice.user!);
  if (uid === null) throw new FenceProblem(`the runtime's user "${choice.user}" does not exist on this host`);
  return String(uid);
}

/**
 * The nft script that replaces the data folder's table in one transaction:
 * the agents of each fenced runtime may answer connections made to them
 * and open new ones only to their destinations; anything else is refused
 * at once (admin-prohibited: connect fails with EHOSTUNREACH or EACCES, so
 * an agent hears no instead of waiting, and nobody mistakes it for a
 * closed port). Loopback is not special: the agent's own listening ports
 * are refused too, since a rule keyed on the sender cannot tell whose
 * socket listens at the other end.
 */
export function fenceScript(table: string, runtimes: { uids: string; allow: Destination[] }[], dataDir?: string): string {
  const lines = [`table inet ${table} {}`, `delete table inet ${table}`, `table inet ${table} {`, '  chain output {', '    type filter hook output priority filter; policy accept;'];
  const claim = dataDir === undefined ? '' : ` comment ${claimComment(dataDir)}`;
  runtimes.forEach((r, i) => lines.push(`    meta skuid ${r.uids} jump agents_${i}${claim}`));
  lines.push('  }');
  runtimes.forEach((r, i) => {
    lines.push(`  chain agents_${i} {`, '    ct state established,related accept');
    for (const d of r.allow) lines.push(`    ${allowRule(d)}`);
    lines.push('    reject with icmpx type admin-prohibited', '  }');
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/** The rule's comment naming its data folder, as nft takes it: quoted, no quote or line break inside, within its 128 bytes (a long path keeps its end). */
function claimComment(dataDir: string): string {
  const safe = dataDir.replace(/["\\\n\r]/g, '_');
  const shown = (from: number) => `${CLAIM_PREFIX}${from > 0 ? '…' : ''}${safe.slice(from)}`;
  let from = 0;
  while (Buffer.byteLength(shown(from)) > 120) from++;
  return `"${shown(from)}"`;
}

/**
 * Matched on the connection's original destination, before any NAT: the
 * output hook's filter runs after nat, so Docker's DNS (127.0.0.11:53,
 * rewritten to another port) or a Kubernetes service address would
 * otherwise be judged by where they were rewritten to.
 */
function allowRule(d: Destination): string {
  const family = net.isIPv6(d.address) ? 'ip6' : 'ip';
  const to = d.prefix === undefined ? d.address : `${d.address}/${d.prefix}`;
  const port = d.port === undefined ? '' : ` meta l4proto { tcp, udp } ct original proto-dst ${d.port}`;
  return `ct original ${family} daddr ${to}${port} accept`;
}

/** The data folder's own table, so two Dipper installs on one host keep their fences apart. */
export function fenceTable(dataDir: string): string {
  return `dipper_${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12)}`;
}

/** Every address a host name (or address) stands for now. */
async function addressesOf(host: string): Promise<string[]> {
  if (net.isIP(host)) return [host];
  try {
    return [...new Set((await dns.lookup(host, { all: true })).map((a) => a.address))];
  } catch {
    throw new FenceProblem(`cannot resolve "${host}" to let agents reach it`);
  }
}

function resolvers(file = '/etc/resolv.conf'): string[] {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1].replace(/%.*$/, '')).filter((a) => net.isIP(a));
}

/**
 * Where a fenced runtime's agents may connect: the gateway (every address
 * its public URL's host has now, at that port) and the runtime's own
 * `network.allow`. Names are resolved here, when the worker starts; when
 * any name is involved the agents also need the host's resolvers (port 53).
 */
export async function destinationsOf(choice: RuntimeChoice, publicUrl: string): Promise<Destination[]> {
  const gateway = new URL(publicUrl);
  const wanted = [{ host: gateway.hostname.replace(/^\[|\]$/g, ''), port: Number(gateway.port || (gateway.protocol === 'https:' ? 443 : 80)) as number | undefined, prefix: undefined as number | undefined }];
  for (const entry of allowList(choice)) {
    const d = parseDestination(entry);
    if (!d) throw new FenceProblem(`network.allow entry "${entry}" is not host:port, an address or a network`);
    wanted.push({ host: d.host, port: d.port, prefix: d.prefix });
  }
  const out: Destination[] = [];
  for (const w of wanted) {
    if (w.prefix !== undefined) out.push({ address: w.host, prefix: w.prefix, port: w.port });
    else for (const address of await addressesOf(w.host)) out.push({ address, port: w.port });
  }
  if (wanted.some((w) => !net.isIP(w.host))) for (const address of resolvers()) out.push({ address, port: 53 });
  return out;
}

function takeDownFence(table: string): void {
  try {
    execFileSync('nft', ['delete', 'table', 'inet', table], { stdio: 'ignore' });
  } catch {
    // none was up, or nft is not installed: nothing to take down
  }
}

/** Two fenced runtimes sharing user numbers would share one chain (the first jump wins): said at start instead. */
function refuseOverlaps(uids: string[]): void {
  const ranges = uids.map((u) => u.split('-').map(Number)).map(([first, last]) => ({ first, last: last ?? first }));
  for (let i = 0; i < ranges.length; i++) {
    for (let j = i + 1; j < ranges.length; j++) {
      if (ranges[i].first <= ranges[j].last && ranges[j].first <= ranges[i].last) {
        throw new FenceProblem(`two runtimes' users overlap (${uids[i]} and ${uids[j]}): give each fenced runtime user numbers of its own`);
      }
    }
  }
}

/** A runtime's `network`: "open" (no fence) or `{allow: [...]}`. */
export const fenced = (choice: RuntimeChoice) => choice.user !== undefined && choice.network !== 'open';
const allowList = (choice: RuntimeChoice) => (typeof choice.network === 'object' ? (choice.network.allow ?? []) : []);

/**
 * At worker start, for runtimes whose agents run as other users: puts up
 * (or replaces) the data folder's nftables table. It stays when the worker
 * stops, since agents outlive a worker; a fence missing while agents run
 * would be the one state worth avoiding. Returns the table's name, or null
 * when no runtime is fenced.
 */
export async function putUpFence(runtimes: RuntimeChoice[], publicUrl: string, dataDir: string): Promise<string | null> {
  const chosen = runtimes.filter(fenced);
  const table = fenceTable(dataDir);
  if (chosen.length === 0) {
    // No runtime is fenced (any more): a table an earlier worker left up comes down, so "open" means open.
    if (runtimes.some((c) => c.user !== undefined)) takeDownFence(table);
    return null;
  }
  // Runtimes sharing one account are the same processes to the kernel: one chain, allowed what either allows.
  const byUids = new Map<string, Destination[]>();
  for (const choice of chosen) {
    const uids = uidsOf(choice);
    byUids.set(uids, [...(byUids.get(uids) ?? []), ...(await destinationsOf(choice, publicUrl))]);
  }
  const rules = [...byUids].map(([uids, allow]) => ({ uids, allow }));
  refuseOverlaps(rules.map((r) => r.uids));
  const claimed = refuseClaimed(rules.map((r) => r.uids), fenceClaims(table));
  if (claimed) throw new FenceProblem(claimed);
  try {
    execFileSync('nft', ['-f', '-'], { input: fenceScript(table, rules, path.resolve(dataDir)), stdio: ['pipe', 'ignore', 'pipe'] });
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    throw new FenceProblem(
      missing
        ? 'a runtime with `user` keeps its agents off the network with nftables: install nft (Debian: nftables), or set "network": "open" on the runtime'
        : `the agents' network fence could not be put up: ${String((err as { stderr?: Buffer }).stderr ?? '').trim().split('\n')[0]}`,
    );
  }
  return table;
}
