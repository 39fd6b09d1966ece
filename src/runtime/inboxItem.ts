/** An inbox item as the runtime API hands it over (docs/runtime-protocol.md), for any runtime of Dipper's. */
export interface InboxItem {
  seq: number;
  message_id: string;
  kind: string;
  from: string | null;
  content: string;
}
