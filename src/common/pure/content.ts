/**
 * Text that lives in the content store (src/common/stores/contentStore.ts), not in
 * workflow state. `chars`, when set, asks readers for that many characters
 * and an ellipsis (a summary of a long report) instead of the whole text.
 */
export interface StoredText {
  content_ref: string;
  bytes: number;
  chars?: number;
  /** Words put before the stored text when it is read (a "[TERMINATION REQUESTED] " header). */
  prefix?: string;
}

/**
 * A message body, a review detail, a summary: inline when small, a
 * reference when large. Histories recorded before the content store hold
 * plain strings only, which every function here treats as before.
 */
export type Text = string | StoredText;

/**
 * A team's rules: the list itself, or, when long, the list as JSON in the content store. A team's rules go to each of
 * up to 100 members in their start: 64 KiB of them, inline, made one workflow task's commands larger than the server
 * takes (issue 20: the leader terminated with GrpcMessageTooLarge).
 */
export type Rules = string[] | StoredText;

/** UTF-8 size of a string, counted in the workflow so no caller has to be trusted for it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Above this many bytes, a gateway keeps text in the content store and hands the workflow a reference. */
export const INLINE_TEXT_BYTES = 1024;

/** What a reference costs in workflow state, counted against the same budgets inline text is. */
export const REF_STATE_BYTES = 96;

export function isStored(text: unknown): text is StoredText {
  return typeof text === 'object' && text !== null && typeof (text as StoredText).content_ref === 'string' && typeof (text as StoredText).bytes === 'number';
}

/** The same words: equal strings, or the same stored piece (a gateway stores equal texts of one call once). */
export function sameText(a: Text, b: Text): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  return a.content_ref === b.content_ref && a.chars === b.chars && a.prefix === b.prefix;
}

/** Bytes of the text itself, wherever it lives. */
export function textBytes(text: Text): number {
  return typeof text === 'string' ? utf8Length(text) : text.bytes;
}

/** Bytes the text takes in workflow state. */
export function stateBytes(text: Text): number {
  return typeof text === 'string' ? utf8Length(text) : REF_STATE_BYTES;
}

/** The first `chars` characters (and an ellipsis when cut); a stored text is cut by its reader. */
export function excerpt(text: Text, chars: number): Text {
  if (typeof text !== 'string') return { content_ref: text.content_ref, bytes: text.bytes, chars, ...(text.prefix ? { prefix: text.prefix } : {}) };
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}

/** Text with a header before it, e.g. "[TERMINATION REQUESTED] ". */
export function prefixed(prefix: string, text: Text): Text {
  return typeof text === 'string' ? `${prefix}${text}` : { ...text, prefix: `${prefix}${text.prefix ?? ''}` };
}

/** A plan task's member's first message: where its task comes from and where its artifacts go, then the task. */
export function assignmentMessage(planTaskId: string, artifactsPath: string, task: Text): Text {
  return prefixed(`[TASK ASSIGNMENT]\nplan_task_id: ${planTaskId}\nartifacts_path: ${artifactsPath}\n[/TASK ASSIGNMENT]\n\n`, task);
}

/** What a reader shows for a stored text, given the text the store holds. */
export function readAs(stored: StoredText, text: string): string {
  const body = stored.chars !== undefined && text.length > stored.chars ? `${text.slice(0, stored.chars)}…` : text;
  return `${stored.prefix ?? ''}${body}`;
}
