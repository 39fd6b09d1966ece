import { z } from 'zod';
import { ConnectorError } from '../../common/isphere/errors';
import type { Connector, ConversationRecord, MessageRecord } from '../../isphere/connectors';
import { fill, queryDigest, startOf } from '../../isphere/paging';
import type { AccessPolicy, Reader } from '../../isphere/policy';
import { answer, cursor, cutText, denied, isphereTool, limitOf, MAX_LISTED_TEXT, mustReadSomething, pageWithin, READ_ERRORS, readSource, sourceFor, text, truncation } from './common';
import { source, withEnvelope } from './envelope';

const TYPES = ['direct', 'group', 'system'] as const;

const conversation = z.object({
  conversation_id: z.string().describe('Stable id: pass it as conversation_id (or as target_id with target_type conversation).'),
  conversation_type: z.enum(TYPES),
  display_name: z.string(),
});

const message = z.object({
  message_id: z.string(),
  sender_id: z.string().nullable(),
  sender_name: z.string().nullable(),
  content_type: z.enum(['text', 'image', 'file', 'rich', 'notify', 'unknown']),
  content_text: z.string().describe(`The text, or a summary for other content; over ${MAX_LISTED_TEXT} characters it is cut with a marker.`),
  attachments: z.array(
    z.object({
      file_id: z.string(),
      file_name: z.string(),
      size_bytes: z.number().int().nullable(),
      download_ref: z.string().nullable().describe('Set when the source can download the file (isphere_receive_files, mode download).'),
    }),
  ),
  created_at: z.string().nullable(),
  received_at: z.string().nullable(),
  source,
  raw_ref: z.string(),
});

const plan = z
  .object({
    source,
    conversation_id: z.string(),
    since: z.string().nullable(),
    limit: z.number().int(),
    keyword: z.string().nullable(),
  })
  .describe('dry_run only: what a read would fetch; no message is read.');

const fold = (s: string) => s.normalize('NFC').trim().toLowerCase();

/** Up to this many candidates are named when a name matches several conversations. */
const CANDIDATES = 10;

/**
 * The conversation a name picks: among those the agent may read, the ones
 * named exactly (case-insensitively), else those whose name contains it.
 * One is the answer; several are AMBIGUOUS_TARGET with the candidates,
 * never the first hit.
 */
async function byName(c: Connector, name: string, type: ConversationRecord['conversation_type'] | undefined, who: Reader, policy: AccessPolicy): Promise<ConversationRecord> {
  const page = await c.findConversations!({ query: name, conversation_type: type, limit: 200 });
  const readable = page.items.filter((conv) => policy.canReadConversation(who, conv));
  const exact = readable.filter((conv) => fold(conv.display_name) === fold(name));
  const picked = exact.length > 0 ? exact : readable;
  if (picked.length === 1) return picked[0];
  if (picked.length === 0) throw new ConnectorError('TARGET_NOT_FOUND', `No conversation you may read is named like "${name.slice(0, 100)}".`, false, { field: 'query' });
  throw new ConnectorError('AMBIGUOUS_TARGET', `${picked.length} conversations match "${name.slice(0, 100)}"; call again with one conversation_id.`, false, {
    field: 'query',
    candidates: picked.slice(0, CANDIDATES).map(({ conversation_id, conversation_type, display_name }) => ({ conversation_id, conversation_type, display_name })),
  });
}

export const receiveMessages = isphereTool({
  name: 'isphere_receive_messages',
  title: 'Read iSphere messages',
  description:
    'Read one conversation\'s messages, newest first: by conversation_id, or by query naming the conversation (a name that matches several is refused with the candidates). With both, query keeps only messages containing it. since keeps messages created at or after it. dry_run answers the plan without reading messages.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  errorCodes: [...READ_ERRORS, 'TARGET_NOT_FOUND', 'AMBIGUOUS_TARGET'],
  input: z.strictObject({
    conversation_id: z.string().min(1).max(200).describe('The conversation (from a previous read); optional when query names it.').optional(),
    conversation_type: z.enum([...TYPES, 'unknown']).describe('Only a conversation of this type; unknown (the default) takes any.').optional(),
    query: text(500, 'Without conversation_id: the conversation\'s name (or part of it). With it: a keyword the messages must contain.').optional(),
    since: z.iso.datetime({ offset: true }).describe('ISO-8601 time; only messages created at or after it.').optional(),
    limit: limitOf(50, 200).optional(),
    cursor: cursor.optional(),
    include_attachment_metadata: z.boolean().describe('List each message\'s attachments (default true).').optional(),
    source_preference: readSource.optional(),
    dry_run: z.boolean().describe('Answer the plan (conversation, source, filters) without reading any message (default false).').optional(),
  }),
  output: withEnvelope({
    conversation,
    messages: z.array(message),
    next_cursor: z.string().nullable().describe('Older messages of this query; null on the last page.'),
    truncated: truncation.optional(),
    plan: plan.optional(),
  }),
  async handler(input, ctx) {
    const tool = 'isphere_receive_messages';
    const dryRun = input.dry_run ?? false;
    return answer(tool, ctx, dryRun, async (call) => {
      const who = await mustReadSomething(call);
      const { policy } = call.service;
      const name = input.query === undefined ? undefined : input.query.normalize('NFC').trim();
      if (input.conversation_id === undefined && !name) {
        throw new ConnectorError('INVALID_ARGUMENT', 'Give conversation_id, or query naming the conversation.', false, { field: 'conversation_id' });
      }
      const type = input.conversation_type === 'unknown' ? undefined : input.conversation_type;
      const since = input.since === undefined ? undefined : new Date(input.since).toISOString();
      const keyword = input.conversation_id !== undefined && name ? fold(name) : null;
      const limit = input.limit ?? 50;
      const attachments = input.include_attachment_metadata ?? true;
      const digest = queryDigest([tool, input.conversation_id ?? null, name ? fold(name) : null, type ?? null, since ?? null, attachments, ctx.caller.runId, ctx.caller.agentId]);
      const { preference, start } = sourceFor(input.source_preference, input.cursor, digest);
      const got = await call.service.sources.read(preference, 'read_messages', async (c) => {
        const conv = input.conversation_id !== undefined ? await c.conversation!(input.conversation_id) : await byName(c, name!, type, who, policy);
        if (type !== undefined && conv.conversation_type !== type) {
          throw new ConnectorError('TARGET_NOT_FOUND', `${conv.conversation_id} is not a ${type} conversation.`, false, { field: 'conversation_type' });
        }
        if (!policy.canReadConversation(who, conv)) throw denied(`conversation ${conv.conversation_id}`);
        if (dryRun) return { conv, filled: null };
        const matches = (m: MessageRecord) => keyword === null || fold(m.content_text).includes(keyword) || (m.sender_name !== null && fold(m.sender_name).includes(keyword));
        const filled = await fill(limit, start ?? startOf(limit), (at) => c.readMessages!({ conversation_id: conv.conversation_id, since, limit: at.limit, cursor: at.cursor ?? undefined }), matches);
        return { conv, filled };
      });
      call.trail.note({ source: got.source, fallbacks: got.fallbacks, target_ref: got.value.conv.conversation_id });
      const { conversation_id, conversation_type, display_name } = got.value.conv;
      const head = { conversation: { conversation_id, conversation_type, display_name } };
      if (got.value.filled === null) {
        return { ...head, messages: [], next_cursor: null, plan: { source: got.source, conversation_id, since: since ?? null, limit, keyword } };
      }
      const cut: number[] = [];
      const items = got.value.filled.items.map((m, i) => {
        const shortened = cutText(m.content_text);
        if (shortened !== m.content_text) cut.push(i);
        return { ...m, content_text: shortened, attachments: attachments ? m.attachments : [] };
      });
      const page = pageWithin({ ...got.value.filled, items }, { source: got.source, digest, budget: call.service.budgetBytes, tool }, (shown) =>
        cut.filter((i) => i < shown).map((i) => `messages[${i}].content_text`),
      );
      return { ...head, messages: page.items, next_cursor: page.next_cursor, ...(page.truncated ? { truncated: page.truncated } : {}) };
    });
  },
});
