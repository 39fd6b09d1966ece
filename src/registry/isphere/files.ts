import path from 'node:path';
import { z } from 'zod';
import { ConnectorError } from '../../common/isphere/errors';
import type { Connector, ConversationRecord, FileRecord } from '../../isphere/connectors';
import { fill, queryDigest, startOf } from '../../isphere/paging';
import { runFileOp } from '../../isphere/fileOps';
import type { ToolContext } from '../types';
import { answer, cursor, denied, isphereTool, limitOf, mustReadSomething, pageWithin, READ_ERRORS, readSource, sourceFor, truncation, type Call } from './common';
import { source, withEnvelope } from './envelope';

const file = z.object({
  file_id: z.string(),
  message_id: z.string().nullable(),
  conversation_id: z.string().nullable(),
  file_name: z.string(),
  size_bytes: z.number().int().nullable(),
  mime_type: z.string().nullable(),
  created_at: z.string().nullable(),
  download_ref: z.string().nullable(),
  saved_path: z.string().nullable().describe('Where a download wrote (or, in a dry run, would write) the file.'),
  sha256: z.string().nullable(),
  source,
});

const id = (what: string) => z.string().min(1).max(200).describe(what);

/** A file name as Dipper writes it: the file id, then the name with anything but plain characters replaced. */
export function savedName(f: Pick<FileRecord, 'file_id' | 'file_name'>): string {
  const base = path.basename(f.file_name.replace(/\\/g, '/')).replace(/[^\p{L}\p{N}._ -]/gu, '_').replace(/^\.+/, '_').slice(0, 150) || 'file';
  return `${f.file_id.replace(/[^A-Za-z0-9_-]/g, '_')}-${base}`;
}

/** A directory the caller names: absolute, no `..`, no NUL; where it may be is the deployment's download roots. */
function outputDir(raw: string | undefined): string {
  if (raw === undefined) throw new ConnectorError('INVALID_ARGUMENT', 'mode download needs output_dir.', false, { field: 'output_dir' });
  if (raw.includes('\0') || !path.isAbsolute(raw) || raw.split(/[\\/]/).includes('..')) {
    throw new ConnectorError('INVALID_ARGUMENT', 'output_dir must be an absolute path without "..".', false, { field: 'output_dir' });
  }
  return path.resolve(raw);
}

export const receiveFiles = isphereTool({
  name: 'isphere_receive_files',
  title: 'List or download iSphere files',
  description:
    'List files shared in iSphere (mode list, the default): a conversation\'s, a message\'s, or every file you may read, newest first. mode download plans (dry_run, the default for downloads) or writes files into output_dir, which must lie under a download directory the operator approved (your run\'s workspace has isphere/downloads); each saved file comes back with its path, size and sha256.',
  permission: 'agent_mutation',
  idempotency: 'desired_state',
  concurrency: 'none',
  errorCodes: [...READ_ERRORS, 'TARGET_NOT_FOUND', 'DRY_RUN_ONLY'],
  input: z.strictObject({
    conversation_id: id('Only files of this conversation.').optional(),
    message_id: id('Only files of this message.').optional(),
    file_id: id('download: this one file (else every file of message_id).').optional(),
    mode: z.enum(['list', 'download']).describe('list (default) or download.').optional(),
    output_dir: z.string().min(1).max(1000).describe('download: the directory to write into, absolute.').optional(),
    limit: limitOf(50, 200).optional(),
    cursor: cursor.optional(),
    source_preference: readSource.optional(),
    dry_run: z.boolean().describe('download: plan only, writing nothing (default true). Ignored when listing.').optional(),
  }),
  output: withEnvelope({
    mode: z.enum(['list', 'download']),
    files: z.array(file),
    next_cursor: z.string().nullable().describe('The next page of this query; null on the last.'),
    truncated: truncation.optional(),
  }),
  async handler(input, ctx) {
    const tool = 'isphere_receive_files';
    const mode = input.mode ?? 'list';
    const dryRun = mode === 'download' ? (input.dry_run ?? true) : false;
    return answer(tool, ctx, dryRun, async (call) => {
      const who = await mustReadSomething(call);
      const { policy } = call.service;
      if (mode === 'list' && input.file_id !== undefined) throw new ConnectorError('INVALID_ARGUMENT', 'file_id picks a file to download; a list goes by conversation_id or message_id.', false, { field: 'file_id' });
      if (mode === 'list' && input.output_dir !== undefined) throw new ConnectorError('INVALID_ARGUMENT', 'output_dir is for mode download.', false, { field: 'output_dir' });
      const dir = mode === 'download' ? outputDir(input.output_dir) : undefined;
      if (mode === 'download' && input.file_id === undefined && input.message_id === undefined) {
        throw new ConnectorError('INVALID_ARGUMENT', 'A download names file_id, or message_id for that message\'s files.', false, { field: 'file_id' });
      }
      const limit = input.limit ?? 50;
      const digest = queryDigest([tool, mode, input.conversation_id ?? null, input.message_id ?? null, input.file_id ?? null, dir ?? null, ctx.caller.runId, ctx.caller.agentId]);
      const { preference, start } = sourceFor(input.source_preference, input.cursor, digest);
      const got = await call.service.sources.read(preference, 'list_files', async (c) => {
        // Each file is shown only when its conversation may be read; conversations are looked up once per call.
        const seen = new Map<string, Promise<ConversationRecord | null>>();
        const conv = (cid: string) => {
          if (!seen.has(cid)) seen.set(cid, conversationOf(c, cid));
          return seen.get(cid)!;
        };
        if (input.conversation_id !== undefined) {
          const named = await conv(input.conversation_id);
          if (named === null) throw new ConnectorError('TARGET_NOT_FOUND', `No conversation ${input.conversation_id}.`, false, { field: 'conversation_id' });
          if (!policy.canReadConversation(who, named)) throw denied(`conversation ${named.conversation_id}`);
        }
        const readable = new Set<string>();
        let hidden = 0;
        const filled = await fill(
          limit,
          start ?? startOf(limit),
          async (at) => {
            const page = await c.listFiles!({ conversation_id: input.conversation_id, message_id: input.message_id, limit: at.limit, cursor: at.cursor ?? undefined });
            for (const f of page.items) {
              const of = f.conversation_id === null ? null : await conv(f.conversation_id);
              if (of !== null && policy.canReadConversation(who, of)) readable.add(f.file_id);
              else if (input.file_id === undefined || f.file_id === input.file_id) hidden++;
            }
            return page;
          },
          (f) => readable.has(f.file_id) && (input.file_id === undefined || f.file_id === input.file_id),
        );
        // Asked for by id, found, and hidden by the policy: refused, not reported missing.
        if ((input.message_id !== undefined || input.file_id !== undefined) && filled.items.length === 0 && hidden > 0) {
          throw denied(input.file_id !== undefined ? `file ${input.file_id}` : `the files of message ${input.message_id}`);
        }
        if (input.file_id !== undefined && filled.items.length === 0) throw new ConnectorError('TARGET_NOT_FOUND', `No file ${input.file_id} you may read${input.message_id ? ` on message ${input.message_id}` : ''}.`, false, { field: 'file_id' });
        return filled;
      });
      call.trail.note({ source: got.source, fallbacks: got.fallbacks, target_ref: input.file_id ?? input.message_id ?? input.conversation_id ?? null });
      const planned = dir === undefined ? got.value : { ...got.value, items: got.value.items.map((f) => ({ ...f, saved_path: path.join(dir, savedName(f)) })) };
      const page = pageWithin(planned, { source: got.source, digest, budget: call.service.budgetBytes, tool });
      const files = dir !== undefined && !dryRun ? await download(call, ctx, dir, page.items) : page.items;
      return { mode, files, next_cursor: page.next_cursor, ...(page.truncated ? { truncated: page.truncated } : {}) };
    });
  },
});

/** The real download, on the run's host: each file written under its planned name, with its size and sha256. */
async function download(call: Call, ctx: ToolContext, dir: string, files: FileRecord[]): Promise<FileRecord[]> {
  if (files.length === 0) return files;
  // Only a source that can hand over bytes can download (the mock and the local store list files, nothing more).
  if (files.some((f) => f.download_ref === null)) {
    throw new ConnectorError('DRY_RUN_ONLY', `The ${files[0].source} source cannot download files; only a dry run is possible from it.`, false, { reason: 'source_cannot_download' });
  }
  const { host } = await call.service.identity(ctx.caller);
  const done = await runFileOp(
    ctx.team,
    call.service.files.taskQueue,
    ctx.caller,
    { op: 'download', runId: ctx.caller.runId, dir, files: files.map((f) => ({ file_id: f.file_id, saved_name: path.basename(f.saved_path!), sha256: f.sha256 })), ...(host ? { host } : {}) },
    'output_dir',
    call.service.files.waitMs,
  );
  const saved = new Map((done.saved ?? []).map((s) => [s.file_id, s]));
  return files.map((f) => {
    const s = saved.get(f.file_id)!;
    return { ...f, saved_path: s.saved_path, size_bytes: s.size_bytes, sha256: s.sha256 };
  });
}

async function conversationOf(c: Connector, id: string): Promise<ConversationRecord | null> {
  try {
    return await c.conversation!(id);
  } catch (err) {
    if (err instanceof ConnectorError && err.code === 'TARGET_NOT_FOUND') return null;
    throw err;
  }
}
