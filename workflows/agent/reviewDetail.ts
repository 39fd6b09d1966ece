/** The spec's envelope: a review's detail names what kind of hand-in it is. */
const ENVELOPE = /\[(review required|iteration ready)\]/i;

/**
 * Why a signal_review detail is refused, or null. Pure, so the gateway runs
 * it before it stores a long detail (nothing is kept for a refused call) and
 * the workflow runs it on details that arrive inline.
 */
export function reviewDetailProblem(detail: string): { reason: 'detail_empty' | 'envelope_missing'; message: string } | null {
  if (detail.trim() === '') return { reason: 'detail_empty', message: 'detail is empty; describe the deliverables inside a [REVIEW REQUIRED] envelope.' };
  if (!ENVELOPE.test(detail)) return { reason: 'envelope_missing', message: 'detail must contain [REVIEW REQUIRED] or [ITERATION READY].' };
  return null;
}
