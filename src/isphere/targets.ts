import { ConnectorError } from '../common/isphere/errors';
import type { Connector } from './connectors';
import type { AccessPolicy, Reader } from './policy';

export type TargetType = 'contact' | 'group' | 'conversation';

export interface Target {
  target_type: TargetType;
  /** Always the stable id, whether the caller gave the id or a name. */
  target_id: string;
  display_name: string | null;
}

/** What else the source knows that tells this target from another of the same name: for the person who approves a send, never in a tool's answer. */
export type TargetDetails = Record<string, string | number | null>;

/** Up to this many candidates are named when a name matches several targets. */
const CANDIDATES = 10;
const fold = (s: string) => s.normalize('NFC').trim().toLowerCase();

/**
 * A send's target: the stable id of `type` first; failing that, a display
 * name matching exactly one target of that type (case-insensitively). A
 * name matching several is AMBIGUOUS_TARGET with the candidates, never the
 * first hit; none is TARGET_NOT_FOUND. An inactive contact or archived
 * group cannot receive. Only targets the agent may read are considered.
 */
export async function resolveTarget(c: Connector, type: TargetType, ref: string, who: Reader, policy: AccessPolicy): Promise<{ target: Target; details: TargetDetails }> {
  const byId = await lookup(c, type, ref);
  if (byId) {
    if (!readable(policy, who, type, byId)) throw deniedTarget(byId.target_id);
    return { target: plain(byId), details: byId.details ?? {} };
  }
  const named = (await byName(c, type, ref)).filter((t) => readable(policy, who, type, t));
  // Found by name: its record by id carries every field the source has.
  if (named.length === 1) return { target: plain(named[0]), details: (await lookup(c, type, named[0].target_id).catch(() => null))?.details ?? named[0].hint ?? {} };
  if (named.length === 0) throw new ConnectorError('TARGET_NOT_FOUND', `No ${type} you may reach has the id or exact name "${ref.slice(0, 100)}".`, false, { field: 'target_id' });
  throw new ConnectorError('AMBIGUOUS_TARGET', `${named.length} ${type}s are named "${ref.slice(0, 100)}"; call again with one target_id.`, false, {
    field: 'target_id',
    candidates: named.slice(0, CANDIDATES).map((t) => ({ target_type: t.target_type, target_id: t.target_id, display_name: t.display_name, ...t.hint })),
  });
}

const plain = ({ target_type, target_id, display_name }: Found): Target => ({ target_type, target_id, display_name });

type Found = Target & { hint?: TargetDetails; details?: TargetDetails; peer?: { type: 'direct' | 'group' | 'system'; id: string | null } };

function readable(policy: AccessPolicy, who: Reader, type: TargetType, t: Found): boolean {
  if (type === 'contact') return policy.canRead(who, 'contacts', t.target_id);
  if (type === 'group') return policy.canRead(who, 'groups', t.target_id);
  return policy.canReadConversation(who, { conversation_id: t.target_id, conversation_type: t.peer!.type, peer_id: t.peer!.id });
}

const deniedTarget = (id: string) => new ConnectorError('PERMISSION_DENIED', `The access policy does not let this agent reach ${id}.`, false, { reason: 'access_policy', field: 'target_id' });

const unavailable = (type: TargetType, id: string, why: string) =>
  new ConnectorError('TARGET_NOT_FOUND', `${type} ${id} is ${why} and cannot receive.`, false, { field: 'target_id', reason: why });

/** The target with this id, or null when there is none (a name, then, or nothing). */
async function lookup(c: Connector, type: TargetType, id: string): Promise<Found | null> {
  try {
    if (type === 'contact') {
      const found = await c.contact!(id);
      if (!found.active) throw unavailable(type, id, 'inactive');
      return { target_type: type, target_id: found.contact_id, display_name: found.display_name, details: { account: found.account ?? null, department: found.department, title: found.title ?? null } };
    }
    if (type === 'group') {
      const found = await c.group!(id);
      if (found.archived) throw unavailable(type, id, 'archived');
      return { target_type: type, target_id: found.group_id, display_name: found.display_name, details: { member_count: found.member_count, owner: found.owner_ref ?? null } };
    }
    const found = await c.conversation!(id);
    return { target_type: type, target_id: found.conversation_id, display_name: found.display_name, peer: { type: found.conversation_type, id: found.peer_id }, details: { conversation_type: found.conversation_type, peer_id: found.peer_id } };
  } catch (err) {
    if (err instanceof ConnectorError && err.code === 'TARGET_NOT_FOUND' && err.details.reason === undefined) return null;
    throw err;
  }
}

/** Every target of `type` whose display name is exactly `name` (active and unarchived only). */
async function byName(c: Connector, type: TargetType, name: string): Promise<Found[]> {
  const want = fold(name);
  if (want === '') return [];
  if (type === 'contact') {
    const page = await c.searchContacts({ query: name, include_inactive: false, limit: 100 });
    return page.items
      .filter((x) => fold(x.display_name) === want)
      .map((x) => ({ target_type: type, target_id: x.contact_id, display_name: x.display_name, hint: { department: x.department } }));
  }
  if (type === 'group') {
    const page = await c.searchGroups({ query: name, include_archived: false, limit: 100 });
    return page.items
      .filter((x) => fold(x.display_name) === want)
      .map((x) => ({ target_type: type, target_id: x.group_id, display_name: x.display_name, hint: { member_count: x.member_count } }));
  }
  const page = await c.findConversations!({ query: name, limit: 200 });
  return page.items
    .filter((x) => fold(x.display_name) === want)
    .map((x) => ({ target_type: type, target_id: x.conversation_id, display_name: x.display_name, hint: { conversation_type: x.conversation_type }, peer: { type: x.conversation_type, id: x.peer_id } }));
}
