import { resolveTexts, type ContentStore } from '../common/stores/contentStore';
import { INLINE_TEXT_BYTES, isStored, type Text } from '../common/pure/content';
import type { ContentKeeping } from '../registry/capabilities';
import { NotFound, WorkflowRefusal } from './teamClient';

export { CONTENT_GONE } from '../common/stores/contentStore';

/**
 * The gateway's side of the content store: large text goes in before the
 * Update that refers to it, comes out again when a read answers, and is
 * dropped when the Update was refused.
 */
export class ContentKeeper implements ContentKeeping {
  constructor(private readonly store: ContentStore) {}

  /** Small text stays inline (no write on the hot path); larger text is stored and referred to. */
  async keep(runId: string, text: string): Promise<Text> {
    return Buffer.byteLength(text) > INLINE_TEXT_BYTES ? this.store.put(runId, text) : text;
  }

  /** Like `keep` for several texts of one call: equal texts are stored once and get the same reference (so the workflow can compare them). */
  keeper(runId: string): { keep: (text: string) => Promise<Text>; kept: Text[] } {
    const byText = new Map<string, Text>();
    const kept: Text[] = [];
    return {
      kept,
      // One at a time, so equal texts share their first copy.
      keep: async (text: string) => {
        let t = byText.get(text);
        if (t === undefined) {
          t = await this.keep(runId, text);
          byText.set(text, t);
          kept.push(t);
        }
        return t;
      },
    };
  }

  /** Drops what `keep` stored for a call that was refused or never reached its workflow. */
  async forget(...texts: (Text | undefined)[]): Promise<void> {
    const refs = texts.filter(isStored).map((t) => t.content_ref);
    if (refs.length > 0) await this.store.drop(refs);
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
      // Only when the workflow said no, or is not there: after needs_repair or no answer, an Update may have been taken.
      if (err instanceof NotFound || err instanceof WorkflowRefusal) await this.forget(...texts);
      throw err;
    }
  }

  /** A copy of `value` (a Query's answer, an event) with every stored text replaced by its words. */
  resolve<T>(value: T): Promise<T> {
    return resolveTexts(this.store, value);
  }
}
