import { CHINESE, DIRECT_PEERS, ENGLISH, FILES, GROUPS, NOTICES, PEOPLE, RICH, SELF, UNKNOWN, type FilePlan } from './seedData';
import type { BridgeConversation, ContentType, ConversationType } from '../../common/isphere/bridgeRecords';
import type { SimSeed } from './types';

const DAY = 86_400_000;
/** A month of history ending before the contract's date, so every send made since is newer than the seed. */
const START = Date.parse('2026-06-08T00:00:00.000Z');

/** Messages per conversation besides the file messages, in conversation order. */
const DIRECT_COUNTS = [18, 14, 12, 6, 12, 15, 10, 12, 8, 9];
const GROUP_COUNTS = [30, 14, 34, 12, 26, 10, 10, 14];
const SYSTEM_COUNT = 12;

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const contactId = (n: number) => `c_${pad(n, 4)}`;

interface Sender {
  id: string | null;
  name: string | null;
}

interface Plan {
  conversation_id: string;
  type: ConversationType;
  /** Contact numbers; 0 is the logged-in account. */
  senders: number[];
  chinese: boolean;
  /** The days of the month the conversation was active. */
  days: [number, number];
}

interface Draft {
  conversation_id: string;
  sender: Sender;
  content_type: ContentType;
  content_text: string;
  at: number;
  received: number;
  files: FilePlan[];
}

/** xorshift32: a fixed sequence in [0, 1), so every run seeds the same world. */
function sequence(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

/**
 * The simulator's default world: 30 contacts, 8 groups, 19 conversations
 * with about 300 messages over a month, and 21 files with real bytes.
 * Deterministic: the same ids, times and bytes on every call.
 */
export function defaultSeed(): SimSeed {
  const next = sequence(20260709);
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)];
  const person = (n: number): Sender => (n === 0 ? { id: SELF.account_id, name: SELF.display_name } : { id: contactId(n), name: PEOPLE[n - 1][0] });

  const conversations: BridgeConversation[] = [];
  const plans: Plan[] = [];
  DIRECT_PEERS.forEach((peer, i) => {
    const conversation_id = `conv_d_${pad(i + 1, 4)}`;
    conversations.push({ conversation_id, conversation_type: 'direct', display_name: PEOPLE[peer - 1][0], peer_id: contactId(peer) });
    // The contact who left talked only in the first days of the month.
    const days: [number, number] = PEOPLE[peer - 1][4] ? [0, 30] : [0, 10];
    plans.push({ conversation_id, type: 'direct', senders: [peer, 0], chinese: /\p{Script=Han}/u.test(PEOPLE[peer - 1][0]), days });
  });
  GROUPS.forEach((group, i) => {
    const conversation_id = `conv_g_${pad(i + 1, 4)}`;
    conversations.push({ conversation_id, conversation_type: 'group', display_name: group.name, peer_id: `g_${pad(i + 1, 4)}` });
    plans.push({ conversation_id, type: 'group', senders: [...group.members, 0], chinese: /\p{Script=Han}/u.test(group.name) || group.owner === 6, days: group.archived ? [0, 8] : [0, 30] });
  });
  conversations.push({ conversation_id: 'conv_s_0001', conversation_type: 'system', display_name: 'System Notices', peer_id: null });
  plans.push({ conversation_id: 'conv_s_0001', type: 'system', senders: [], chinese: false, days: [0, 30] });

  const system: Sender = { id: null, name: 'iSphere' };
  const draft = (plan: Plan, sender: Sender, content_type: ContentType, content_text: string): Draft => {
    const at = START + Math.floor((plan.days[0] + next() * (plan.days[1] - plan.days[0])) * DAY);
    return { conversation_id: plan.conversation_id, sender, content_type, content_text, at, received: at + Math.floor(next() * 2000), files: [] };
  };
  const chatter = (plan: Plan): Draft => {
    if (plan.type === 'system') return draft(plan, system, 'notify', pick(NOTICES));
    const roll = next();
    if (plan.type === 'group' && roll < 0.05) return draft(plan, { id: null, name: null }, 'notify', `${person(pick(plan.senders)).name} joined the group`);
    if (roll < 0.1) return draft(plan, person(pick(plan.senders)), 'rich', pick(RICH));
    if (roll < 0.13) return draft(plan, person(pick(plan.senders)), 'unknown', pick(UNKNOWN));
    return draft(plan, person(pick(plan.senders)), 'text', pick(plan.chinese ? CHINESE : ENGLISH));
  };

  const counts = [...DIRECT_COUNTS, ...GROUP_COUNTS, SYSTEM_COUNT];
  const drafts: Draft[] = plans.flatMap((plan, i) => Array.from({ length: counts[i] }, () => chatter(plan)));
  for (const file of FILES) {
    if (file.withPrevious) {
      drafts[drafts.length - 1].files.push(file);
      continue;
    }
    const plan = plans.find((p) => p.conversation_id === file.conversation);
    if (!plan) throw new Error(`seed file ${file.name} names an unknown conversation`);
    const type = file.mime.startsWith('image/') ? 'image' : 'file';
    const sent = draft(plan, plan.type === 'system' ? system : person(pick(plan.senders)), type, file.caption ?? file.name);
    drafts.push({ ...sent, files: [file] });
    if (file.note) drafts.push({ ...sent, content_type: 'text', content_text: file.note, files: [] });
  }

  // Ids follow time, as a client numbers what it receives; a stable sort keeps same-millisecond messages in the order made.
  drafts.sort((a, b) => a.at - b.at);
  const seed: SimSeed = {
    account: { ...SELF },
    contacts: PEOPLE.map(([display_name, account, department, title, active], i) => ({ contact_id: contactId(i + 1), display_name, account, department, title, active })),
    groups: GROUPS.map((g, i) => ({
      group_id: `g_${pad(i + 1, 4)}`,
      display_name: g.name,
      member_count: g.memberCount ?? g.members.length + 1,
      owner_ref: contactId(g.owner),
      archived: g.archived ?? false,
    })),
    conversations,
    messages: [],
    files: [],
  };
  drafts.forEach((d, i) => {
    const message_id = `m_${pad(i + 1, 6)}`;
    seed.messages.push({
      message_id,
      conversation_id: d.conversation_id,
      sender_id: d.sender.id,
      sender_name: d.sender.name,
      content_type: d.content_type,
      content_text: d.content_text,
      created_at: new Date(d.at).toISOString(),
      received_at: new Date(d.received).toISOString(),
    });
    for (const file of d.files) {
      const n = seed.files.length + 1;
      seed.files.push({ file_id: `f_${pad(n, 4)}`, message_id, file_name: file.name, mime_type: file.mime, bytes: fileBytes(file, n) });
    }
  });
  return seed;
}

const ZIP = 'PK\u0003\u0004';
/** The first bytes of each kind, so a tool that sniffs types is not confused. */
const MAGIC: Record<string, string> = {
  'application/pdf': '%PDF-1.7\n',
  'image/png': '\u0089PNG\r\n\u001a\n',
  'image/jpeg': '\u00ff\u00d8\u00ff\u00e0',
  'application/zip': ZIP,
};

/** Readable lines for text files; for the rest a header and a fixed run of noise. */
function fileBytes(file: FilePlan, n: number): Buffer {
  const bytes = Buffer.alloc(file.size);
  if (file.mime.startsWith('text/') || file.mime === 'application/sql') {
    let text = '';
    for (let line = 1; text.length < file.size; line++) text += `${file.name} line ${line}: ${ENGLISH[line % ENGLISH.length]}\n`;
    bytes.write(text, 'ascii');
    return bytes;
  }
  const next = sequence(n * 7919);
  for (let i = 0; i + 4 <= file.size; i += 4) bytes.writeUInt32LE(Math.floor(next() * 0x1_0000_0000), i);
  const magic = MAGIC[file.mime] ?? (file.mime.includes('openxmlformats') ? ZIP : '');
  bytes.write(magic, 'latin1');
  return bytes;
}
