import type { ContentStore } from '../../activities/contentStore';
import { INLINE_TEXT_BYTES, isStored, readAs, type StoredText, type Text } from '../../workflows/content';
import { ToolError } from '../registry/errors';
import { NotFound } from './teamClient';

/** What a reader sees of text whose run's retention has passed. */
export const CONTENT_GONE = '[content no longer kept: its run ended and the retention period passed]';

/**
 * The gateway's side of the content store: large text goes in before the
 * Update that refers to it, comes out again when a read answers, and is
 * dropped when the Update was refused.
 */
export class ContentKeeper {
  constructor(private readonly store: ContentStore) {}

  /** Small text stays inline (no write on the hot path); larger text is stored and referred to. */
  keep(runId: string, text: string): Text {
    return Buffer.byteLength(text) > INLINE_TEXT_BYTES ? this.store.put(runId, text) : text;
  }

  /** Drops what `keep` stored for a call that was refused or never reached its workflow. */
  forget(...texts: (Text | undefined)[]): void {
    const refs = texts.filter(isStored).map((t) => t.content_ref);
    if (refs.length > 0) this.store.drop(refs);
  }

  /**
   * Runs `call` with text kept for it, and drops the text when the call was
   * refused. When its outcome is unknown (no answer in time) the text stays:
   * the Update may have been applied, and the run's retention removes it
   * otherwise.
   */
  async around<T>(texts: (Text | undefined)[], call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof NotFound || (err instanceof ToolError && !err.retryable)) this.forget(...texts);
      throw err;
    }
  }

  /** A copy of `value` (a Query's answer, an event) with every stored text replaced by its words. */
  resolve<T>(value: T): T {
    const refs: string[] = [];
    collect(value, refs);
    if (refs.length === 0) return value;
    const texts = this.store.get(refs);
    return replace(value, texts) as T;
  }
}

function collect(value: unknown, into: string[]): void {
  if (isStored(value)) {
    into.push(value.content_ref);
    return;
  }
  if (Array.isArray(value)) for (const v of value) collect(v, into);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) collect(v, into);
}

function replace(value: unknown, texts: Map<string, string>): unknown {
  if (isStored(value)) {
    const text = texts.get(value.content_ref);
    return text === undefined ? CONTENT_GONE : readAs(value as StoredText, text);
  }
  if (Array.isArray(value)) return value.map((v) => replace(v, texts));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replace(v, texts)]));
  }
  return value;
}
