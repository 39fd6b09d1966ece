import { z } from 'zod';
import { ConnectorError } from '../../common/isphere/errors';
import type { Capability, Connector, Page } from '../../isphere/connectors';
import { fill, queryDigest, startOf } from '../../isphere/paging';
import type { ObjectKind } from '../../isphere/policy';
import type { ToolContext } from '../types';
import { answer, cursor, isphereTool, limitOf, mustReadSomething, pageWithin, READ_ERRORS, readSource, sourceFor, text, truncation } from './common';
import { source, withEnvelope } from './envelope';

const confidence = z.number().min(0).max(1).describe('How well the record matches the query: 1 the whole name or account, 0.9 a name starting with it, 0.75 a name containing it, 0.5 another field.');
const rawRef = z.string().describe("The source's own reference, opaque and safe to log.");

const contact = z.object({
  contact_id: z.string().describe('Stable id: use it as target_id and in the access policy.'),
  display_name: z.string(),
  account: z.string().nullable(),
  department: z.string().nullable(),
  title: z.string().nullable(),
  source,
  confidence,
  raw_ref: rawRef,
});

const group = z.object({
  group_id: z.string().describe('Stable id: use it as target_id and in the access policy.'),
  display_name: z.string(),
  member_count: z.number().int().nullable(),
  owner_ref: z.string().nullable(),
  source,
  confidence,
  raw_ref: rawRef,
});

const query = text(500, 'Words of a name, account, department or title (for groups, of the name); matched case-insensitively.');

/** The normalised query: NFC, trimmed; blank is refused, since it would list everyone. */
function queryOf(raw: string): string {
  const q = raw.normalize('NFC').trim();
  if (q === '') throw new ConnectorError('INVALID_ARGUMENT', 'query is blank: give part of a name.', false, { field: 'query' });
  return q;
}

interface Search<T> {
  tool: string;
  kind: ObjectKind;
  need: Capability;
  idOf: (item: T) => string;
  read: (c: Connector, q: { query: string; include: boolean; limit: number; cursor?: string }) => Promise<Page<T>>;
}

/**
 * A search: the policy hides what the agent may not read before the page
 * is filled (up to five source pages), so `limit` counts what it may see,
 * and a cursor continues on the same source.
 */
async function search<T, R extends object>(
  s: Search<T>,
  input: { query: string; limit?: number; cursor?: string; source_preference?: string },
  include: boolean,
  ctx: ToolContext,
  shape: (page: ReturnType<typeof pageWithin<T>>) => R,
) {
  return answer(s.tool, ctx, false, async (call) => {
    const who = await mustReadSomething(call);
    const q = queryOf(input.query);
    const limit = input.limit ?? 20;
    const digest = queryDigest([s.tool, q.toLowerCase(), include, ctx.caller.runId, ctx.caller.agentId]);
    const { preference, start } = sourceFor(input.source_preference, input.cursor, digest);
    const got = await call.service.sources.read(preference, s.need, (c) =>
      fill(limit, start ?? startOf(limit), (at) => s.read(c, { query: q, include, limit: at.limit, cursor: at.cursor ?? undefined }), (item) =>
        call.service.policy.canRead(who, s.kind, s.idOf(item)),
      ),
    );
    call.trail.note({ source: got.source, fallbacks: got.fallbacks });
    return shape(pageWithin(got.value, { source: got.source, digest, budget: call.service.budgetBytes, tool: s.tool }));
  });
}

export const searchContacts = isphereTool({
  name: 'isphere_search_contacts',
  title: 'Search iSphere contacts',
  description:
    'Find people in iSphere by name, account, department or title, to resolve a person before reading their messages or drafting to them. Only contacts the access policy lets you read are listed. Each has a stable contact_id and a confidence; ask when no single match has confidence 1.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  errorCodes: READ_ERRORS,
  input: z.strictObject({
    query,
    limit: limitOf(20, 100).optional(),
    cursor: cursor.optional(),
    source_preference: readSource.optional(),
    include_inactive: z.boolean().describe('Also list deactivated contacts (default false).').optional(),
  }),
  output: withEnvelope({ contacts: z.array(contact), next_cursor: z.string().nullable().describe('The next page of this query; null on the last.'), truncated: truncation.optional() }),
  async handler(input, ctx) {
    const include = input.include_inactive ?? false;
    return search(
      {
        tool: 'isphere_search_contacts',
        kind: 'contacts',
        need: 'search_contacts',
        idOf: (c: z.infer<typeof contact>) => c.contact_id,
        read: (c, q) => c.searchContacts({ query: q.query, include_inactive: q.include, limit: q.limit, cursor: q.cursor }),
      },
      input,
      include,
      ctx,
      ({ items, ...rest }) => ({ contacts: items, ...rest }),
    );
  },
});

export const searchGroups = isphereTool({
  name: 'isphere_search_groups',
  title: 'Search iSphere groups',
  description:
    'Find iSphere groups by name, to resolve a group conversation before reading it or drafting to it. Only groups the access policy lets you read are listed. Each has a stable group_id and a confidence; ask when no single match has confidence 1.',
  permission: 'read_only',
  idempotency: 'read',
  concurrency: 'none',
  errorCodes: READ_ERRORS,
  input: z.strictObject({
    query: text(500, 'Words of the group name; matched case-insensitively.'),
    limit: limitOf(20, 100).optional(),
    cursor: cursor.optional(),
    source_preference: readSource.optional(),
    include_archived: z.boolean().describe('Also list archived groups (default false).').optional(),
  }),
  output: withEnvelope({ groups: z.array(group), next_cursor: z.string().nullable().describe('The next page of this query; null on the last.'), truncated: truncation.optional() }),
  async handler(input, ctx) {
    const include = input.include_archived ?? false;
    return search(
      {
        tool: 'isphere_search_groups',
        kind: 'groups',
        need: 'search_groups',
        idOf: (g: z.infer<typeof group>) => g.group_id,
        read: (c, q) => c.searchGroups({ query: q.query, include_archived: q.include, limit: q.limit, cursor: q.cursor }),
      },
      input,
      include,
      ctx,
      ({ items, ...rest }) => ({ groups: items, ...rest }),
    );
  },
});
