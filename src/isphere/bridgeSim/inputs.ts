import { z } from 'zod';

/**
 * Request shapes of docs/isphere-bridge.md. Objects are strict, so an
 * unknown field is refused by name instead of being silently ignored.
 */

export const MAX_FILE_BYTES = 20 * 1024 * 1024;
const CLIENT_MESSAGE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;
// A plain character class: a grouped pattern overflows the regex stack on a 27 MB string.
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Counted in characters (code points), as the protocol states its bounds, not UTF-16 units. */
const chars = (min: number, max: number) =>
  z.string().refine((s) => {
    const n = Array.from(s).length;
    return n >= min && n <= max;
  }, `expected ${min}-${max} characters`);

const limit = z.coerce.number().int().min(1).max(200).default(50);
const cursor = z.string().max(4000).optional();
const flag = z.enum(['true', 'false']).optional();
const text = z.string().max(200).optional();
const id = z.string().max(200).optional();

export const contactsQuery = z.strictObject({ query: text, include_inactive: flag, limit, cursor });
export const groupsQuery = z.strictObject({ query: text, include_archived: flag, limit, cursor });
export const conversationsQuery = z.strictObject({ query: text, conversation_type: z.enum(['direct', 'group', 'system']).optional(), limit, cursor });
export const messagesQuery = z.strictObject({
  since: z
    .string()
    .refine((s) => RFC3339.test(s) && Number.isFinite(Date.parse(s)), 'expected an RFC3339 time')
    .optional(),
  limit,
  cursor,
});
export const filesQuery = z.strictObject({ conversation_id: id, message_id: id, limit, cursor });

export type ContactsQuery = z.infer<typeof contactsQuery>;
export type GroupsQuery = z.infer<typeof groupsQuery>;
export type ConversationsQuery = z.infer<typeof conversationsQuery>;
export type MessagesQuery = z.infer<typeof messagesQuery>;
export type FilesQuery = z.infer<typeof filesQuery>;

/**
 * The protocol writes its queries as `?query=&limit=`, so a parameter sent
 * empty is taken as not sent rather than refused.
 */
export function withoutEmpty(query: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries((query ?? {}) as Record<string, unknown>).filter(([, v]) => v !== ''));
}

export const clientMessageId = z.string().regex(CLIENT_MESSAGE_ID, 'expected 1-128 characters of A-Z a-z 0-9 . _ : -');
export const sendParams = z.object({ client_message_id: clientMessageId });
const target = {
  client_message_id: clientMessageId,
  target_type: z.enum(['contact', 'group', 'conversation']),
  target_id: z.string().min(1).max(200),
};

export const messageBody = z.strictObject({ ...target, content_text: chars(1, 20_000) });
export const fileBody = z.strictObject({
  ...target,
  file_name: z
    .string()
    .min(1)
    .max(255)
    // A name, never a path: the receiving client saves it under this name.
    .refine((name) => !/[/\\]/.test(name) && !Array.from(name).some((ch) => ch.charCodeAt(0) < 0x20) && name !== '.' && name !== '..', 'expected a file name without a path'),
  content_base64: z.string().refine((s) => s.length % 4 === 0 && BASE64.test(s), 'expected standard base64 with padding'),
  caption: chars(0, 20_000).optional(),
});
export type MessageBody = z.infer<typeof messageBody>;
export type FileBody = z.infer<typeof fileBody>;

export const sessionBody = z.strictObject({ logged_in: z.boolean() });
export const configBody = z.strictObject({ dedupe: z.boolean() });
export const faultBody = z
  .strictObject({
    route: z.enum(['messages', 'files', 'reads']),
    mode: z.enum(['accept_then_drop', 'accept_then_hang', 'fail', 'delay']),
    /** 0 clears the route's fault. */
    count: z.number().int().min(0).max(10_000),
    delay_ms: z.number().int().min(0).max(120_000).optional(),
  })
  .superRefine((fault, ctx) => {
    if (fault.mode === 'delay' && fault.delay_ms === undefined) ctx.addIssue({ code: 'custom', path: ['delay_ms'], message: 'required with mode "delay"' });
    if (fault.mode !== 'delay' && fault.delay_ms !== undefined) ctx.addIssue({ code: 'custom', path: ['delay_ms'], message: 'only with mode "delay"' });
  });
export type FaultBody = z.infer<typeof faultBody>;
export const emptyBody = z.strictObject({});
export const inboundBody = z.strictObject({
  conversation_id: z.string().min(1).max(200),
  content_text: z.string().min(1).max(200_000),
  sender_id: z.string().min(1).max(200).optional(),
  sender_name: z.string().min(1).max(200).optional(),
  count: z.number().int().min(1).max(1000).optional(),
  created_at: z.string().refine((s) => RFC3339.test(s) && Number.isFinite(Date.parse(s)), 'expected an RFC3339 time').optional(),
});
export type InboundBody = z.infer<typeof inboundBody>;
