import type { Response } from 'express';

/**
 * The part of the Anthropic Messages API that Dipper's scripted model
 * speaks and its model proxy reads: one assistant message, written either
 * as JSON or as the server-sent events a streaming client expects.
 */
export type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface AssistantMessage {
  id: string;
  model: string;
  content: Block[];
  stop_reason: 'end_turn' | 'tool_use' | 'max_tokens';
  usage: Usage;
}

/** A rough count of tokens in some text: a quarter of its characters, as the API's own rule of thumb says. */
export function roughTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function messageJson(msg: AssistantMessage): Record<string, unknown> {
  return { ...msg, type: 'message', role: 'assistant', stop_sequence: null };
}

/** Writes the message as the event stream of a `stream: true` request, each block as one start, one delta and one stop. */
export function writeStream(res: Response, msg: AssistantMessage): void {
  res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: Record<string, unknown>): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  };
  send('message_start', { message: { ...messageJson(msg), content: [], stop_reason: null, usage: { input_tokens: msg.usage.input_tokens, output_tokens: 1 } } });
  msg.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { index, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      send('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      send('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    send('content_block_stop', { index });
  });
  send('message_delta', { delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: msg.usage.output_tokens } });
  send('message_stop', {});
  res.end();
}
