/**
 * The name of a question's inbox item at hop `hop` (1 is the first
 * holder): its qid and the end of its own execution's first run id, so a
 * later asking of the same words (the same qid) is a new item. Temporal's
 * run ids are UUIDv7, whose first half is the time; the end is random.
 * The gateway names the first holder's item alike when it tells it itself.
 */
export function questionItemId(qid: string, questionRunId: string, hop: number): string {
  return `${qid}-${questionRunId.slice(-12)}-${hop}`;
}
