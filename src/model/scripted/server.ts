import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { Conversation } from './conversation';
import { messageJson, roughTokens, writeStream, type AssistantMessage, type Block } from '../messages';

/** Who a request is for, from the line the Claude runtime puts in every agent's system prompt. */
export interface AgentMark {
  name: string;
  skill: string;
}

const MARK = /You are the agent "([^"]*)" \(skill ([\w.-]+)\) of a Dipper team\./;

export function agentOf(system: string): AgentMark | null {
  const found = MARK.exec(system);
  return found ? { name: found[1], skill: found[2] } : null;
}

/** One reply: some text, tool calls, or both. No calls ends the turn. */
export interface Step {
  say?: string;
  calls?: Array<{ tool: string; input: Record<string, unknown> }>;
}

/** An agent's part: from everything it has seen, what it does next. */
export type Script = (c: Conversation, agent: AgentMark) => Step;

export interface ModelRequest {
  agent: AgentMark | null;
  model: string;
  tools: string[];
  conversation: Conversation;
  reply: AssistantMessage;
  /** The API key the request carried, so a test can check which credential reached the model. */
  apiKey: string;
}

export interface ScriptedModel {
  url: string;
  requests: ModelRequest[];
  close(): Promise<void>;
}

/**
 * A model that plays scripts: a real HTTP server speaking the Messages API
 * (JSON or streamed events, and count_tokens), so the Claude runtime and
 * the model proxy run unchanged against it. Scripts are chosen per agent
 * by skill (then `default`), told apart by what the runtime writes into
 * each agent's system prompt, never by the order requests arrive in.
 * Requests without that line (titles, summaries and other side requests
 * of the runtime) get a short generic answer.
 */
export async function startScriptedModel(scripts: Record<string, Script>, opts: { port?: number; host?: string } = {}): Promise<ScriptedModel> {
  const requests: ModelRequest[] = [];
  const app = express();
  app.use(express.json({ limit: '32mb' }));
  app.post('/v1/messages/count_tokens', (req: Request, res: Response) => {
    res.json({ input_tokens: roughTokens(JSON.stringify(req.body ?? {})) });
  });
  app.post('/v1/messages', (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const conversation = Conversation.of(body);
    const agent = agentOf(conversation.system);
    const script = agent ? (scripts[agent.skill] ?? scripts.default) : undefined;
    const step: Step = agent && script && conversation.tools.length > 0 ? safely(script, conversation, agent) : { say: 'OK.' };
    const content: Block[] = [];
    if (step.say) content.push({ type: 'text', text: step.say });
    for (const call of step.calls ?? []) {
      const tool = conversation.tool(call.tool);
      if (!tool) {
        content.push({ type: 'text', text: `(script error: the tool ${call.tool} is not offered)` });
        continue;
      }
      content.push({ type: 'tool_use', id: `toolu_${crypto.randomBytes(12).toString('hex')}`, name: tool, input: call.input });
    }
    if (content.length === 0) content.push({ type: 'text', text: 'Done.' });
    const reply: AssistantMessage = {
      id: `msg_${crypto.randomBytes(12).toString('hex')}`,
      model: String(body.model ?? 'scripted'),
      content,
      stop_reason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
      usage: { input_tokens: roughTokens(JSON.stringify([body.system, body.messages])), output_tokens: roughTokens(JSON.stringify(content)) },
    };
    requests.push({ agent, model: reply.model, tools: conversation.tools, conversation, reply, apiKey: String(req.headers['x-api-key'] ?? '') });
    if (body.stream === true) writeStream(res, reply);
    else res.json(messageJson(reply));
  });
  app.use((_req: Request, res: Response) => {
    res.status(404).json({ type: 'error', error: { type: 'not_found_error', message: 'not found' } });
  });
  const server = app.listen(opts.port ?? 0, opts.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A script that throws says so in its reply, where a test reading the transcript sees it, instead of failing the request. */
function safely(script: Script, c: Conversation, agent: AgentMark): Step {
  try {
    return script(c, agent);
  } catch (err) {
    return { say: `(script error: ${err instanceof Error ? err.message : String(err)})` };
  }
}
