import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface IdRange {
  first: number;
  last: number;
}

/** "first-last", inclusive: never 0 (root) nor 2^32 - 1 (the kernel's "no id"). */
export function parseRange(text: string): IdRange | null {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (!m) return null;
  const first = Number(m[1]);
  const last = Number(m[2]);
  return first >= 1 && first <= last && last < 2 ** 32 - 1 ? { first, last } : null;
}

/**
 * Hands out numeric OS ids (group ids for workspaces and agents, user ids
 * for agents that get their own) from a range, one per key, on this host.
 * A key always gets the same id, so a retried activity or a relaunch finds
 * what it had; two keys never share one. Each id taken is a file named by
 * the number holding its key, linked in place (link(2) fails if it exists): the filesystem settles a
 * race between two workers of one host. A key starts at a place its hash
 * picks and steps on past ids already taken, so the common case is one
 * file made and none read.
 */
export class HostIds {
  constructor(
    private readonly dir: string,
    private readonly range: IdRange,
  ) {}

  idFor(key: string): number {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const size = this.range.last - this.range.first + 1;
    const start = createHash('sha256').update(key).digest().readUInt32BE(0) % size;
    // Written whole first, then linked in: a reader never sees a half-written key.
    const draft = path.join(this.dir, `.draft-${process.pid}-${randomUUID()}`);
    fs.writeFileSync(draft, key, { mode: 0o600 });
    try {
      for (let step = 0; step < size; step++) {
        const id = this.range.first + ((start + step) % size);
        const file = path.join(this.dir, String(id));
        try {
          fs.linkSync(draft, file);
          return id;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          if (fs.readFileSync(file, 'utf8') === key) return id;
        }
      }
      throw new Error(`every id of ${this.range.first}-${this.range.last} is taken`);
    } finally {
      fs.rmSync(draft, { force: true });
    }
  }
}
