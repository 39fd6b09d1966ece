import fs from 'node:fs';
import { z } from 'zod';
import type { ConversationRecord } from './connectors/types';

/**
 * Who may read what through the isphere tools: an operator's file
 * (DIPPER_ISPHERE_POLICY_FILE), read once at start. A rule names agents by
 * skill and by run (`*` for any; a trailing `*` matches a prefix) and lists
 * the contacts, groups and conversations they may read, by id, the same
 * way. Anything no rule grants is refused: with no file, nobody reads
 * anything. A direct conversation is readable with its contact, a group
 * conversation with its group.
 *
 * Spawning grants no rights: a member reads only what its leader may read
 * too (and so up to the root), since the leader picks the member's skill.
 * A rule with `beyond_leader: true` is the explicit exception: what it
 * grants its skills holds whatever their leaders may read.
 */
const ids = z.array(z.string().min(1).max(200)).max(10_000);
const rule = z.strictObject({
  skills: ids.default(['*']),
  runs: ids.default(['*']),
  read: z.strictObject({ contacts: ids.default([]), groups: ids.default([]), conversations: ids.default([]) }),
  beyond_leader: z.boolean().default(false),
});
const file = z.strictObject({ rules: z.array(rule).max(1000) });
type Rule = z.infer<typeof rule>;

/** The agent asking: its run, the skill it runs, and its leaders' skills (from their launches, never from tool input). */
export interface Reader {
  runId: string;
  skill: string;
  /** The skills of its leader, that leader's leader, and so on to the root; empty for the root. */
  leaders: string[];
}

export type ObjectKind = 'contacts' | 'groups' | 'conversations';

const matches = (patterns: string[], value: string) =>
  patterns.some((p) => p === '*' || p === value || (p.endsWith('*') && value.startsWith(p.slice(0, -1))));

export class AccessPolicy {
  constructor(private readonly rules: Rule[]) {}

  /** Loads and checks the file; a malformed file stops the gateway at start, naming the problem. */
  static load(path: string | undefined): AccessPolicy {
    if (!path) return new AccessPolicy([]);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(path, 'utf8'));
    } catch (err) {
      throw new Error(`DIPPER_ISPHERE_POLICY_FILE ${path} is not readable JSON: ${(err as Error).message}`);
    }
    const parsed = file.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`DIPPER_ISPHERE_POLICY_FILE ${path}: ${issue.path.join('.') || '(file)'}: ${issue.message}`);
    }
    return new AccessPolicy(parsed.data.rules);
  }

  private grants(who: Reader): Rule[] {
    return this.rules.filter((r) => matches(r.skills, who.skill) && matches(r.runs, who.runId));
  }

  /** Whether any rule lets this agent read anything at all (what it names may still be beyond its leader). */
  readsAnything(who: Reader): boolean {
    return this.grants(who).some((r) => r.read.contacts.length + r.read.groups.length + r.read.conversations.length > 0);
  }

  canRead(who: Reader, kind: ObjectKind, id: string): boolean {
    const granted = this.grants(who).filter((r) => matches(r.read[kind], id));
    if (granted.length === 0) return false;
    if (who.leaders.length === 0 || granted.some((r) => r.beyond_leader)) return true;
    return this.canRead({ runId: who.runId, skill: who.leaders[0], leaders: who.leaders.slice(1) }, kind, id);
  }

  /** A conversation: named itself, or through the contact or group on its other side. */
  canReadConversation(who: Reader, c: Pick<ConversationRecord, 'conversation_id' | 'conversation_type' | 'peer_id'>): boolean {
    if (this.canRead(who, 'conversations', c.conversation_id)) return true;
    if (c.peer_id === null) return false;
    if (c.conversation_type === 'direct') return this.canRead(who, 'contacts', c.peer_id);
    if (c.conversation_type === 'group') return this.canRead(who, 'groups', c.peer_id);
    return false;
  }
}
