/**
 * The result budget (contract section 8.3): a tool's result (agentteam, isphere) is at most
 * `budget` bytes of compact JSON. Lists are shortened from the end and long
 * texts cut, each with a marker saying so; nothing is dropped silently.
 */
export const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Room kept for the truncation marker and a cursor. */
const MARKER_ROOM = 1024;

/** How many of `items` fit in `budget` with `rest` of the result around them (at least one, if any). */
export function itemsThatFit(items: unknown[], rest: unknown, budget: number): number {
  let used = bytesOf(rest) + MARKER_ROOM;
  for (let i = 0; i < items.length; i++) {
    used += bytesOf(items[i]) + 1;
    if (used > budget) return i;
  }
  return items.length;
}

interface Leaf {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  path: string;
  length: number;
}

function leaves(value: unknown, path: string, out: Leaf[]): void {
  if (Array.isArray(value)) value.forEach((v, i) => (typeof v === 'string' ? out.push({ holder: value, key: i, path: `${path}[${i}]`, length: v.length }) : leaves(v, `${path}[${i}]`, out)));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      if (typeof v === 'string') out.push({ holder: value as Record<string, unknown>, key: k, path: p, length: v.length });
      else leaves(v, p, out);
    }
  }
}

/**
 * Cuts the longest texts of `result` (in place) until it fits, keeping at
 * least 200 characters of each and marking every cut text; returns the cut
 * fields' paths. A result that cannot fit by cutting texts is left for the
 * caller to shorten its lists.
 */
export function cutTexts(result: Record<string, unknown>, budget: number): string[] {
  const cut = new Set<string>();
  for (let round = 0; round < 50; round++) {
    const over = bytesOf(result) + MARKER_ROOM - budget;
    if (over <= 0) break;
    const all: Leaf[] = [];
    leaves(result, '', all);
    const longest = all.filter((l) => l.length > 400).sort((a, b) => b.length - a.length)[0];
    if (!longest) break;
    const text = longest.holder[longest.key as never] as string;
    // Bytes can be up to 4 per character: cut by characters, at least by what is over, keeping 200.
    const keep = Math.max(200, Math.min(text.length - over, Math.floor(text.length / 2)));
    const marker = ` … [cut: ${text.length - keep} more characters]`;
    (longest.holder as Record<string | number, unknown>)[longest.key] = text.slice(0, keep) + marker;
    cut.add(longest.path);
  }
  return [...cut];
}
