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
