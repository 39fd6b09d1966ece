import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DipperConfig } from '../../src/config';
import type { IdRange } from './hostIds';

/** User numbers another Dipper's fence on this host holds, and whose they are. */
export interface Claim extends IdRange {
  table: string;
  /** The data folder the fence's rule names; null for a fence put up before rules named theirs. */
  dataDir: string | null;
}

/** Said in each fence rule, so another data folder's worker can tell whose the numbers are. */
export const CLAIM_PREFIX = 'dipper data folder ';

/**
 * The user numbers every other Dipper fence on this host claims, read from
 * the kernel's own rule set: a fence is what makes two data folders' agents
 * collide (a connection must pass every table's output hook, so each fence
 * refuses the other's agents their gateway), and a table is there exactly
 * while it fences. None when nft cannot be read.
 */
export function fenceClaims(ownTable: string): Claim[] {
  let ruleset: { nftables?: { rule?: NftRule }[] };
  try {
    ruleset = JSON.parse(execFileSync('nft', ['-j', 'list', 'ruleset'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })) as typeof ruleset;
  } catch {
    return [];
  }
  const claims: Claim[] = [];
  for (const { rule } of ruleset.nftables ?? []) {
    if (!rule || rule.family !== 'inet' || !rule.table.startsWith('dipper_') || rule.table === ownTable || rule.chain !== 'output') continue;
    for (const e of rule.expr ?? []) {
      if (e.match?.left?.meta?.key !== 'skuid') continue;
      const right = e.match.right;
      const [first, last] = typeof right === 'number' ? [right, right] : Array.isArray(right?.range) ? right.range : [NaN, NaN];
      if (!Number.isInteger(first) || !Number.isInteger(last)) continue;
      const dataDir = rule.comment?.startsWith(CLAIM_PREFIX) ? rule.comment.slice(CLAIM_PREFIX.length) : null;
      claims.push({ table: rule.table, first, last, dataDir });
    }
  }
  return claims;
}

interface NftRule {
  family: string;
  table: string;
  chain: string;
  comment?: string;
  expr?: { match?: { left?: { meta?: { key?: string } }; right?: number | { range?: [number, number] } } }[];
}

const overlaps = (a: IdRange, b: IdRange) => a.first <= b.last && b.first <= a.last;

/** Where `"user": "auto"` ranges come from: 10,000 blocks of 100,000 user numbers, far from people's and containers' (subuid) numbers. */
const AUTO_BASE = 1_000_000_000;
const AUTO_BLOCK = 100_000;
const AUTO_BLOCKS = 10_000;

/**
 * Gives each runtime whose `user` is "auto" a range of user numbers of its
 * own: kept in the data folder once chosen (agents outlive workers, so a
 * range never moves under them), first chosen at a place the data folder's
 * path and the runtime's name pick, stepping past any range another
 * Dipper's fence on this host claims or another runtime here holds. The
 * runtime's `user` becomes that range, as if the operator had written it.
 */
export function resolveAutoUsers(runtimes: DipperConfig['runtimes'], dataDir: string, claims: Claim[]): void {
  const named: [string, { user?: string | number }][] = [['default', runtimes.default], ...Object.entries(runtimes.bySkill)];
  const auto = named.filter(([, c]) => c.user === 'auto');
  if (auto.length === 0) return;
  const file = path.join(dataDir, 'host-ids', 'uid-ranges.json');
  const kept = readKept(file);
  const taken: IdRange[] = [...claims];
  for (const [, c] of named) {
    const m = typeof c.user === 'string' ? /^(\d+)-(\d+)$/.exec(c.user) : null;
    if (m) taken.push({ first: Number(m[1]), last: Number(m[2]) });
  }
  for (const range of Object.values(kept)) taken.push(range);
  for (const [name, choice] of auto) {
    let range = kept[name];
    if (!range) {
      const start = createHash('sha256').update(`${path.resolve(dataDir)}\0${name}`).digest().readUInt32BE(0) % AUTO_BLOCKS;
      for (let step = 0; step < AUTO_BLOCKS && !range; step++) {
        const first = AUTO_BASE + ((start + step) % AUTO_BLOCKS) * AUTO_BLOCK;
        const candidate = { first, last: first + AUTO_BLOCK - 1 };
        if (!taken.some((t) => overlaps(t, candidate))) range = candidate;
      }
      if (!range) throw new Error('every automatic range of user numbers is taken on this host');
      kept[name] = range;
      taken.push(range);
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(Object.fromEntries(Object.entries(kept).map(([k, r]) => [k, `${r.first}-${r.last}`]))), { mode: 0o600 });
      fs.renameSync(`${file}.tmp`, file);
    }
    choice.user = `${range.first}-${range.last}`;
  }
}

function readKept(file: string): Record<string, IdRange> {
  try {
    const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
    const out: Record<string, IdRange> = {};
    for (const [name, text] of Object.entries(raw)) {
      const m = /^(\d+)-(\d+)$/.exec(text);
      if (m) out[name] = { first: Number(m[1]), last: Number(m[2]) };
    }
    return out;
  } catch {
    return {};
  }
}

/** The user numbers of this data folder's fence that another Dipper's fence already holds: said at start, naming it. */
export function refuseClaimed(uids: string[], claims: Claim[]): string | null {
  for (const u of uids) {
    const [first, last] = u.split('-').map(Number);
    const mine = { first, last: last ?? first };
    const other = claims.find((c) => overlaps(c, mine));
    if (other) {
      const whose = other.dataDir ? `the data folder ${other.dataDir}` : 'an older Dipper';
      return `user numbers ${u} are already fenced by another Dipper on this host (nft table ${other.table}, ${whose}): give each data folder's runtimes user numbers of their own ("user": "auto" picks a free range)`;
    }
  }
  return null;
}
