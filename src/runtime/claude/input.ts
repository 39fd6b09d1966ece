import type { SDKUserMessage } from '@anthropic-ai/claude-agent-sdk';

/**
 * The session's streaming input: user turns pushed as they come (the first
 * message, then inbox items), read by the SDK one by one. Reading waits
 * while it is empty, which is how an idle agent stays alive at no cost.
 */
export class Input implements AsyncIterable<SDKUserMessage> {
  private readonly queue: SDKUserMessage[] = [];
  private wake: (() => void) | null = null;
  private closed = false;

  push(uuid: SDKUserMessage['uuid'], text: string): void {
    this.queue.push({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid });
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SDKUserMessage> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }
}
