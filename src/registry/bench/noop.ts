import { z } from 'zod';
import { defineTool } from '../types';

/**
 * The gateway's floor: auth, JSON parsing and a fresh MCP server per request,
 * exactly as a beidou call gets them, and no Temporal behind it.
 */
export const noop = defineTool({
  name: 'noop',
  surface: 'bench',
  owner: 'bench',
  title: 'Do nothing',
  description: 'Returns {ok: true} without touching Temporal. Served only when DIPPER_BENCH_SURFACE=1.',
  permission: 'read_only',
  readOnly: true,
  destructive: false,
  idempotent: true,
  hiddenContext: [],
  input: z.strictObject({}),
  output: z.object({ ok: z.literal(true) }),
  async handler() {
    return { ok: true as const };
  },
});

/** The longest answer noop_bytes makes: a little over list_peers across 10,000 agents. */
const MAX_BYTES = 4 * 1024 * 1024;

/**
 * The same floor for a large answer: `rows` strings whose JSON adds up to
 * `bytes` (the answer's structured content is that size, as list_peers' is
 * when the bench measured it), so a read that returns many rows can be held
 * against what the gateway, the MCP transport and the client cost for the
 * same bytes and row count with no Temporal behind them.
 */
export const noopBytes = defineTool({
  name: 'noop_bytes',
  surface: 'bench',
  owner: 'bench',
  title: 'Do nothing, at length',
  description: 'Returns {ok: true, rows} whose JSON is `bytes` long, in `rows` strings, without touching Temporal. Served only when DIPPER_BENCH_SURFACE=1.',
  permission: 'read_only',
  readOnly: true,
  destructive: false,
  idempotent: true,
  hiddenContext: [],
  input: z.strictObject({
    bytes: z.number().int().min(0).max(MAX_BYTES).describe('Length of the answer as JSON.'),
    rows: z.number().int().min(1).max(100_000).describe('How many strings it is made of.'),
  }),
  output: z.object({ ok: z.literal(true), rows: z.array(z.string()) }),
  async handler({ bytes, rows }) {
    return { ok: true as const, rows: filler(bytes, rows) };
  },
});

/** `rows` strings of letters such that JSON.stringify({ok: true, rows}) is `bytes` long (or as near as the row count allows). */
export function filler(bytes: number, rows: number): string[] {
  // {"ok":true,"rows":[...]}: 21 characters around the array; each row adds its two quotes, and all but the first a comma.
  const letters = Math.max(0, bytes - 20 - rows * 3);
  const each = Math.floor(letters / rows);
  const extra = letters - each * rows;
  return Array.from({ length: rows }, (_, i) => 'x'.repeat(each + (i < extra ? 1 : 0)));
}
