import { z } from 'zod';

/**
 * What the task tools answer, as published output schemas, and the
 * projections from the Task API's camelCase records onto them. Only known
 * fields pass: an external service's extra fields never reach the model.
 */
const str = z.string();
const nullableStr = z.string().nullable();

export const taskSummary = z.object({
  number: z.number().int(),
  scope_id: str.describe('Canonical task scope id, for parent_task_scope.'),
  title: str,
  status: str,
  priority: str,
  assignee: nullableStr,
  creator: nullableStr,
  parent_number: z.number().int().nullable(),
  labels: z.array(str),
  subtask_count: z.number().int(),
  updated_at: str,
});

export const taskDetail = taskSummary.extend({
  channel: str,
  description: str,
  checklist: z.array(z.object({ text: str, done: z.boolean() })),
  urls: z.array(str),
  messages: z.array(str),
  workspaces: z.array(str),
  attachments: z.array(z.object({ name: str, url: str, size_bytes: z.number().optional(), media_type: str.optional() })),
  blocker: nullableStr,
  thread: nullableStr,
  created_at: str,
});

export const checkpoint = z.object({ id: str, summary: str, author: nullableStr, created_at: str });

/** Says a result was cut to its budget, what was cut, and how to read the rest. */
export const truncation = z
  .object({
    reason: z.literal('result_budget'),
    budget_bytes: z.number().int(),
    items_omitted: z.number().int().optional(),
    fields_cut: z.array(str).optional(),
    continue_with: z.string().describe('How to read what was left out.'),
  })
  .describe('Present only when the result was shortened; the result is then not complete.');

type Raw = Record<string, unknown>;
const s = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const ns = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const n = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const objs = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter((x): x is Raw => !!x && typeof x === 'object') : []);

export function summaryOf(t: Raw): z.infer<typeof taskSummary> {
  return {
    number: n(t.number) ?? 0,
    scope_id: s(t.scopeId),
    title: s(t.title),
    status: s(t.status, 'todo'),
    priority: s(t.priority, 'normal'),
    assignee: ns(t.assignee),
    creator: ns(t.creator),
    parent_number: n(t.parentNumber),
    labels: strs(t.labels),
    subtask_count: n(t.subtaskCount) ?? 0,
    updated_at: s(t.updatedAt),
  };
}

export function detailOf(t: Raw): z.infer<typeof taskDetail> {
  return {
    ...summaryOf(t),
    channel: s(t.channel),
    description: s(t.description),
    checklist: objs(t.checklist).map((c) => ({ text: s(c.text), done: c.done === true })),
    urls: strs(t.urls),
    messages: strs(t.messages),
    workspaces: strs(t.workspaces),
    attachments: objs(t.attachments).map((a) => ({
      name: s(a.name),
      url: s(a.url),
      ...(n(a.sizeBytes) !== null ? { size_bytes: n(a.sizeBytes)! } : {}),
      ...(typeof a.mediaType === 'string' ? { media_type: a.mediaType } : {}),
    })),
    blocker: ns(t.blocker),
    thread: ns(t.thread),
    created_at: s(t.createdAt),
  };
}

export function checkpointOf(c: Raw): z.infer<typeof checkpoint> {
  return { id: s(c.id), summary: s(c.summary), author: ns(c.author), created_at: s(c.createdAt) };
}
