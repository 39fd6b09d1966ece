import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { StoredText, Text } from '../../src/common/pure/content';
import type { AgentState } from './state';

/**
 * Continue-as-new carries the agent's whole state in one payload, which
 * Temporal caps at 2 MiB. Long texts already live in the content store,
 * but short ones add up: a thousand 1 KiB messages nobody has read, the
 * reports of hundreds of children. Before it continues, an agent whose
 * state has grown past SPILL_AT moves its inline texts to the content store
 * (an activity) and carries references instead. Only the skeleton (ids,
 * flags, records) is left, and the limits on counts keep that small.
 */
const SPILL_AT = 512 * 1024;
/** Texts shorter than a reference are not worth moving. */
const WORTH_MOVING = 128;
/** One activity input stays far below Temporal's 2 MiB. */
const BATCH_CHARS = 512 * 1024;

const io = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumInterval: '5s' } });

interface Slot {
  get(): Text | undefined;
  set(t: StoredText): void;
}

/** Every inline text of the state, with where it goes back. */
function slots(s: AgentState): Slot[] {
  const d = s.data;
  const out: Slot[] = [];
  const at = <T extends object, K extends keyof T>(o: T, k: K): Slot => ({ get: () => o[k] as Text | undefined, set: (t) => void (o[k] = t as T[K]) });
  for (const item of d.inbox.items) out.push(at(item, 'content'));
  for (const child of Object.values(d.children)) out.push(at(child, 'summary'));
  for (const task of d.plan?.tasks ?? []) out.push(at(task, 'task'), at(task, 'description'));
  for (const team of d.teams) out.push(at(team, 'task'));
  out.push(at(d.review, 'detail'), at(d, 'last_status_detail'), at(d.launch_spec, 'firstMessage'), at(d.launch_spec, 'roleDescription'));
  return out.filter((slot) => {
    const t = slot.get();
    return typeof t === 'string' && t.length >= WORTH_MOVING;
  });
}

/** Moves inline texts to the content store when the state is too large to carry comfortably; returns how many moved. */
export async function spillBeforeContinuing(s: AgentState): Promise<number> {
  if (JSON.stringify(s.data).length <= SPILL_AT) return 0;
  const todo = slots(s);
  let moved = 0;
  while (moved < todo.length) {
    const batch: Slot[] = [];
    let chars = 0;
    while (moved + batch.length < todo.length && (batch.length === 0 || chars < BATCH_CHARS)) {
      const slot = todo[moved + batch.length];
      chars += (slot.get() as string).length;
      batch.push(slot);
    }
    const stored = await io.keepTexts({ runId: s.id.runId, texts: batch.map((slot) => slot.get() as string) });
    batch.forEach((slot, i) => slot.set(stored[i]));
    moved += batch.length;
  }
  // What the inbox budget counts changed with its texts.
  s.inbox.recount();
  return moved;
}
