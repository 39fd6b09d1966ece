import fs from 'node:fs';
import path from 'node:path';

/** Lines every run writes, which say nothing about this one. */
const EXPECTED = [/No activities registered, not polling for activity tasks/, /shutdown_worker rpc errored during worker shutdown/];

/**
 * What the shared stack's processes warned about, one line per message with
 * its count: CI keeps only the test output, and a worker or gateway that
 * went wrong (a stall, an outage it saw) otherwise leaves no trace there.
 */
export function logDigest(dir: string, files = ['worker.log', 'gateway.log']): string {
  const out: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(dir, file), 'utf8');
    } catch {
      continue;
    }
    const counts = new Map<string, { n: number; first: string }>();
    for (const line of text.split('\n')) {
      if (!line.trim() || EXPECTED.some((re) => re.test(line))) continue;
      const key = messageOf(line);
      const seen = counts.get(key.text) ?? { n: 0, first: key.at };
      seen.n++;
      counts.set(key.text, seen);
    }
    for (const [text, { n, first }] of counts) out.push(`${file}: ${n}× ${text}${first ? ` (first at ${first})` : ''}`);
  }
  return out.join('\n');
}

// The Rust core's terminal colours (ESC [ ... m).
const COLOUR = new RegExp(String.fromCharCode(27) + '\\[[0-9;]*m', 'g');

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function messageOf(line: string): { text: string; at: string } {
  try {
    const entry = JSON.parse(line) as { msg?: string; time?: number; err?: string; cause?: string };
    const detail = [entry.err, entry.cause].filter(Boolean).join(': ').replace(/after [\d.]+s.*$/, '');
    return { text: `${entry.msg ?? '?'}${detail ? ` [${detail.slice(0, 160)}]` : ''}`, at: entry.time ? new Date(entry.time).toISOString() : '' };
  } catch {
    const plain = line.replace(COLOUR, '');
    const at = /^(\S+Z)\s+/.exec(plain);
    return { text: plain.slice(at?.[0].length ?? 0).replace(UUID, '<id>').slice(0, 200), at: at?.[1] ?? '' };
  }
}
