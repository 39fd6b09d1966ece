import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { internalError, ToolError } from '../common/toolErrors';
import { EnvelopeError, envelopeOf } from '../registry/isphere/envelope';
import { toMcpTool } from '../registry/mcpTool';
import type { ToolContext, ToolDef } from '../registry/types';
import { safeMessage, type Logger } from '../log';
import { SERVER_VERSION } from '../common/version';
import { NothingDone, notSent, outcomeUnknown } from '../common/serviceErrors';
import { answerWithin } from './deadline';
import { checkReviewGate, gateOf, recordGateDenied } from './reviewGate';
import { NotFound } from '../temporal';


/** MCP wants an object for structuredContent; a bare-array result travels as { items }. */
function structured(out: unknown): Record<string, unknown> {
  return Array.isArray(out) ? { items: out } : (out as Record<string, unknown>);
}

/** "tasks[2].depends_on" from a zod path, plus the unknown key for strict-object issues. */
function fieldOf(issue: z.core.$ZodIssue): string {
  const parts = [...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys.length > 0) parts.push(issue.keys[0]);
  let out = '';
  for (const p of parts) out += typeof p === 'number' ? `[${p}]` : out ? `.${String(p)}` : String(p);
  return out || '(arguments)';
}

export function inputError(error: z.ZodError): ToolError {
  const issue = error.issues[0];
  const field = fieldOf(issue);
  const message =
    issue.code === 'unrecognized_keys' ? `Unknown field "${field}".` : `${field}: ${issue.message}`;
  const fieldErrors = Object.fromEntries(error.issues.slice(0, 20).map((i) => [fieldOf(i), i.message]));
  return new ToolError('invalid_input', message, { field, field_errors: fieldErrors });
}

/**
 * Errors travel as JSON text only: MCP clients check any structuredContent
 * against the tool's output schema, even on an error result. The isphere
 * surface is the exception: its output schemas admit its error envelope
 * (with the call's audit), so the envelope is structured content as well.
 */
export function renderError(err: ToolError, surface?: ToolDef['surface'], call?: { tool: string; dryRun: boolean }): CallToolResult {
  if (surface === 'isphere' && call) {
    const envelope = envelopeOf(err, call.tool, call.dryRun);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(envelope) }], structuredContent: envelope as unknown as Record<string, unknown> };
  }
  const error = surface === 'agentteam' ? contractError(err) : { code: err.code, message: err.message, retryable: err.retryable, ...err.extra };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error }) }] };
}

/** What an isphere refusal's audit says of dry_run before the tool ran: the input's, else the tool's default. */
export function dryRunOf(tool: string, args: Record<string, unknown>): boolean {
  if (typeof args.dry_run === 'boolean') return args.dry_run;
  if (tool === 'isphere_receive_files') return args.mode === 'download';
  return tool === 'isphere_send_message' || tool === 'isphere_send_file';
}

/**
 * The task-tools contract's error (section 8.2): exactly code, message,
 * retryable, field_errors and suggested_action. Facts other surfaces carry
 * beside them are left out.
 */
function contractError(err: ToolError): Record<string, unknown> {
  const { field, field_errors, suggested_action } = err.extra as { field?: string; field_errors?: Record<string, string>; suggested_action?: unknown };
  const fieldErrors = field_errors ?? (field ? { [field]: err.message } : undefined);
  const suggested = suggested_action ?? (err.code === 'review_gate_denied' ? { tool: 'list_pending_reviews', arguments: {} } : undefined);
  return {
    code: err.code,
    message: err.message,
    retryable: err.retryable,
    ...(fieldErrors ? { field_errors: fieldErrors } : {}),
    ...(suggested ? { suggested_action: suggested } : {}),
  };
}

/**
 * The review gate checked here (reviewGate.ts): a read runs beside the
 * check, so it costs no extra latency; another surface's call that changes
 * something waits for it.
 */
async function gateThen<T>(def: ToolDef, ctx: ToolContext, call: () => Promise<T>): Promise<T> {
  if (!def.readOnly) {
    // A gate that could not be asked stopped the change before it was sent.
    await checkReviewGate(def, ctx).catch((err: unknown) => {
      throw err instanceof ToolError && err.code === 'unavailable' ? notSent() : err;
    });
    return call();
  }
  const [gate, out] = await Promise.allSettled([checkReviewGate(def, ctx), call()]);
  if (gate.status === 'rejected') throw gate.reason;
  if (out.status === 'rejected') throw out.reason;
  return out.value;
}

/**
 * No answer in time means different things for a read and a change: a read changed nothing (`unavailable`, ask
 * again), while a beidou change may have been made (its Update can reach the workflow later) and is answered
 * `outcome_unknown`, retryable only when the tool makes a repeat safe. The other surfaces have their own codes for it
 * (agentteam `task_outcome_unknown`, isphere's envelope).
 */
function truthful(def: ToolDef, raw: Record<string, unknown>, err: ToolError): ToolError {
  if (def.surface !== 'beidou' || def.readOnly || err.code !== 'unavailable' || err instanceof NothingDone) return err;
  const keyed = def.idempotency === 'idempotency_key' && typeof raw.idempotency_key === 'string' && raw.idempotency_key.trim() !== '';
  return outcomeUnknown(keyed || def.idempotency === 'call_receipt' || def.idempotency === 'desired_state');
}

/**
 * A beidou call whose workflow is gone and that no tool named otherwise: the caller's own agent (or its run) has
 * closed, since an ended agent's workflow completes. Its token is revoked a moment later; until then, this.
 */
function callerEnded(): ToolError {
  return new ToolError('agent_terminated', 'You have been terminated (or your run has ended); this call changes nothing.');
}

export async function callTool(def: ToolDef, raw: Record<string, unknown>, ctx: ToolContext, log: Logger): Promise<CallToolResult> {
  const started = Date.now();
  let outcome = 'ok';
  // Any call is a sign of life, a read or a refused one too.
  ctx.activity?.();
  if (def.deprecated) ctx.countDeprecated?.(def.name);
  try {
    for (const [field, refusal] of Object.entries(def.refusedFields ?? {})) {
      if (field in raw) throw new ToolError(refusal.code, refusal.message, { field });
    }
    const parsed = def.input.safeParse(raw);
    if (!parsed.success) throw inputError(parsed.error);
    // Every tool call answers within the call timeout; past it, `unavailable` (see deadline.ts). One that waits for
    // a person (ask_user) bounds each of its own steps instead.
    const run = () => (gateOf(def) === 'gateway' ? gateThen(def, ctx, () => def.handler(parsed.data, ctx)) : def.handler(parsed.data, ctx));
    const out = def.waits ? await run() : await answerWithin(ctx.team.callTimeoutMs, run);
    if (ctx.checkOutput) checkOutput(def, out, log);
    // Section 11.3: a deprecated tool still answers normally, with its replacement named beside the result.
    const hint = def.deprecated ? { _meta: { deprecated: { replacement: def.deprecated.replacement } } } : {};
    return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: structured(out), ...hint };
  } catch (err) {
    const ended = err instanceof NotFound && def.surface === 'beidou';
    const known = truthful(def, raw, err instanceof ToolError ? err : ended ? callerEnded() : internalError());
    // The gate refused, here or in the leader's workflow: recorded either way.
    if (known.code === 'review_gate_denied') recordGateDenied(ctx, def.name, known.extra);
    if (!(err instanceof ToolError) && !ended) log.error({ tool: def.name, err: safeMessage(err) }, 'tool failed');
    if (err instanceof EnvelopeError && err.unexpected !== undefined) log.error({ tool: def.name, err: safeMessage(err.unexpected) }, 'tool failed');
    outcome = known.code;
    const rendered = renderError(known, def.surface, { tool: def.name, dryRun: dryRunOf(def.name, raw) });
    // A malformed envelope is logged here; the client's own check of structured content refuses it.
    if (ctx.checkOutput && rendered.structuredContent) matchesOutput(def, rendered.structuredContent, log);
    return rendered;
  } finally {
    log.debug({ tool: def.name, run: ctx.caller.runId, agent: ctx.caller.agentId, ms: Date.now() - started, outcome }, 'tool call');
    ctx.recordCall?.(def.surface, def.name, outcome, (Date.now() - started) / 1000);
  }
}

/**
 * A result that does not match the tool's published output schema is a
 * Dipper bug: with DIPPER_CHECK_OUTPUTS (every test stack) the call fails
 * with `internal` and the log names the tool and the path, so any test
 * making the call fails.
 */
function checkOutput(def: ToolDef, out: unknown, log: Logger): void {
  if (!matchesOutput(def, out, log)) throw internalError();
}

function matchesOutput(def: ToolDef, out: unknown, log: Logger): boolean {
  const checked = def.output.safeParse(out);
  if (checked.success) return true;
  const issue = checked.error.issues[0];
  log.error({ tool: def.name, path: issue.path.join('.'), problem: issue.message }, 'result does not match the output schema');
  return false;
}

/** One surface's tools, with their MCP definitions built once at start. */
export interface McpSurface {
  name: string;
  byName: Map<string, ToolDef>;
  listed: Tool[];
}

export function mcpSurface(name: string, defs: ToolDef[]): McpSurface {
  return { name, byName: new Map(defs.map((d) => [d.name, d])), listed: defs.map(toMcpTool) };
}

/** A fresh server per request: the gateway keeps no session state, so any replica serves any call. */
export function createMcpServer(surface: McpSurface, ctx: ToolContext, log: Logger): Server {
  const server = new Server({ name: surface.name, version: SERVER_VERSION }, { capabilities: { tools: { listChanged: false } } });
  const { byName, listed } = surface;
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const def = byName.get(req.params.name);
    if (!def) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name.slice(0, 100)}`);
    const token = req.params._meta?.progressToken;
    let step = 0;
    const progress =
      token === undefined
        ? undefined
        : (message: string) =>
            extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++step, message } }).catch(() => undefined);
    return callTool(def, req.params.arguments ?? {}, { ...ctx, progress, signal: extra.signal }, log);
  });
  return server;
}
