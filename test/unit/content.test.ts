import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SqliteContentStore } from '../../src/common/stores/contentStore';
import { CONTENT_GONE, ContentKeeper } from '../../src/gateway/content';
import { ToolError } from '../../src/common/toolErrors';
import { emptyInbox, Inbox } from '../../workflows/agent/inbox';
import { excerpt, INLINE_TEXT_BYTES, prefixed, REF_STATE_BYTES, stateBytes, textBytes } from '../../src/common/pure/content';

let dir: string;
let store: SqliteContentStore;
let keeper: ContentKeeper;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-content-'));
  store = new SqliteContentStore(path.join(dir, 'content.db'));
  keeper = new ContentKeeper(store);
});
afterEach(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('stores only text above the inline size, and reads every stored text back in place', async () => {
  const short = 'é'.repeat(INLINE_TEXT_BYTES / 2);
  const long = `${'é'.repeat(INLINE_TEXT_BYTES / 2)}!`;
  expect(await keeper.keep('run_a', short)).toBe(short);
  const kept = await keeper.keep('run_a', long);
  expect(kept).toEqual({ content_ref: expect.stringMatching(/^ct_[0-9a-f]{32}$/), bytes: INLINE_TEXT_BYTES + 1 });
  expect(textBytes(kept)).toBe(INLINE_TEXT_BYTES + 1);
  expect(stateBytes(kept)).toBe(REF_STATE_BYTES);

  const view = { items: [{ content: kept }, { content: short }], summary: excerpt(kept, 3), request: prefixed('[TERMINATION REQUESTED] ', kept) };
  expect(await keeper.resolve(view)).toEqual({ items: [{ content: long }, { content: short }], summary: 'ééé…', request: `[TERMINATION REQUESTED] ${long}` });
  // Inline text is cut and prefixed the same way.
  expect(excerpt('abcdef', 3)).toBe('abc…');
  expect(prefixed('> ', 'hi')).toBe('> hi');
});

it('drops what a refused call stored, keeps what a call with no answer stored, and says when content is gone', async () => {
  const refused = await keeper.keep('run_a', 'r'.repeat(5000));
  const { WorkflowRefusal } = await import('../../src/gateway/teamClient');
  const { needsRepair } = await import('../../src/common/serviceErrors');
  await expect(keeper.around([refused], () => Promise.reject(new WorkflowRefusal('inbox_full', 'full')))).rejects.toThrow('full');
  expect((await store.usage('run_a')).pieces).toBe(0);
  const unknown = await keeper.keep('run_a', 'u'.repeat(5000));
  await expect(keeper.around([unknown], () => Promise.reject(new ToolError('unavailable', 'later', {}, true)))).rejects.toThrow('later');
  // A workflow that needs repair may have taken the Update before its task began to fail.
  await expect(keeper.around([unknown], () => Promise.reject(needsRepair('ag_a')))).rejects.toThrow(/repair/);
  expect(await store.usage('run_a')).toEqual({ pieces: 1, bytes: 5000 });

  expect(await store.dropRun('run_a')).toBe(1);
  expect(await keeper.resolve({ detail: unknown })).toEqual({ detail: CONTENT_GONE });
});

it('counts a stored text in an inbox at the size of its reference, and hands it over by its real size', () => {
  const inbox = new Inbox(emptyInbox());
  inbox.push('message', 'ag_a', { content_ref: 'ct_1', bytes: 300 * 1024 }, 'm1', 1);
  inbox.push('message', 'ag_a', { content_ref: 'ct_2', bytes: 300 * 1024 }, 'm2', 2);
  inbox.push('message', 'ag_a', 'hello', 'm3', 3);
  expect(inbox.pendingBytes).toBe(2 * REF_STATE_BYTES + 5);
  // A read stops at about 512 KiB of what the reader receives: the first stored text, then the next read.
  expect(inbox.after(0, 100).map((i) => i.message_id)).toEqual(['m1']);
  expect(inbox.after(1, 100).map((i) => i.message_id)).toEqual(['m2', 'm3']);
  inbox.ack(2);
  expect(inbox.pendingBytes).toBe(5);
});
