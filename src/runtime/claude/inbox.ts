import { runtimeRequest } from '../retry';
import type { LaunchPayload } from '../../common/launchPayload';
import type { Input } from './input';
import { stableUuid, turnText, type InboxItem } from './turns';

/**
 * Feeds the agent's inbox into its session and acknowledges each item only
 * once the session has stored it (the CLI echoes a stored user turn with
 * the UUID it was given), so an item is in the transcript before it leaves
 * the inbox: a crash in between hands it over again, and the transcript
 * check (`alreadyStored`) keeps the resumed session from hearing it twice.
 */
export class InboxFeeder {
  private cursor = 0;
  /** Items fed and not yet acknowledged, in order. */
  private readonly fed: Array<{ seq: number; uuid: string; stored: boolean }> = [];
  private acking = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly payload: LaunchPayload,
    private readonly input: Input,
    private readonly sessionId: string,
    private readonly alreadyStored: Set<string>,
    private readonly onTerminate: (item: InboxItem | null) => Promise<void>,
    private readonly log: (line: string) => void,
  ) {}

  uuidOf(item: InboxItem): ReturnType<typeof stableUuid> {
    return stableUuid(this.payload.agent_id, this.sessionId, item.message_id || String(item.seq));
  }

  /** Long-polls until the agent ends; every item but the terminate sentinel becomes a user turn. */
  async run(): Promise<void> {
    while (!this.stopped) {
      const view = await runtimeRequest<{ messages: InboxItem[]; status: string }>(
        this.payload.token,
        'GET',
        `${this.payload.inbox_url}?cursor=${this.cursor}&wait_ms=20000`,
      );
      for (const item of view.messages) {
        this.cursor = item.seq;
        if (item.kind === 'terminate') {
          this.stopped = true;
          await this.onTerminate(item);
          return;
        }
        const uuid = this.uuidOf(item);
        this.fed.push({ seq: item.seq, uuid, stored: false });
        if (this.alreadyStored.has(uuid)) this.stored(uuid);
        else {
          this.log(`inbox item ${item.seq} (${item.kind}) becomes the next user turn`);
          this.input.push(uuid, turnText(item));
        }
      }
      if (view.status === 'terminated' && view.messages.length === 0) {
        this.stopped = true;
        await this.onTerminate(null);
        return;
      }
    }
  }

  /** The session stored the turn with this UUID: acknowledge every item up to the last one stored in order. */
  stored(uuid: string): void {
    const entry = this.fed.find((f) => f.uuid === uuid);
    if (!entry) return;
    entry.stored = true;
    let upTo = -1;
    while (this.fed.length > 0 && this.fed[0].stored) upTo = this.fed.shift()!.seq;
    if (upTo < 0) return;
    this.acking = this.acking.then(() => this.ack(upTo)).catch((err: unknown) => this.log(`acknowledging item ${upTo} failed: ${err instanceof Error ? err.message : String(err)}`));
  }

  /** Acknowledges through `seq`, after any acknowledgement already under way. */
  ack(seq: number): Promise<void> {
    return runtimeRequest(this.payload.token, 'POST', `${this.payload.inbox_url}/ack`, { up_to: seq }).then(() => undefined);
  }

  /** Waits for the acknowledgements sent so far. */
  settled(): Promise<void> {
    return this.acking;
  }

  stop(): void {
    this.stopped = true;
  }
}
