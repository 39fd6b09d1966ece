import { Faults } from './faults';
import type { BridgeAccount, BridgeContact, BridgeConversation, BridgeGroup } from '../../common/isphere/bridgeRecords';
import type { Message, SimSeed } from './types';
import { worldFromSeed, type StoredFile, type World } from './world';

export interface MessageAnswer {
  client_message_id: string;
  message_ref: string;
  conversation_id: string;
  accepted_at: string;
  duplicate: boolean;
}

export interface FileAnswer {
  client_message_id: string;
  file_ref: string;
  conversation_id: string;
  sha256: string;
  size_bytes: number;
  accepted_at: string;
  duplicate: boolean;
}

/** An accepted send, kept by client_message_id to answer its repeats. */
export interface SendRecord {
  kind: 'message' | 'file';
  /** What was asked, so that a repeat asking something else is told apart. */
  fingerprint: string;
  answer: MessageAnswer | FileAnswer;
}

/** What reached the iSphere client: one per accepted send, never one per request. */
export interface Delivery {
  client_message_id: string;
  kind: 'message' | 'file';
  target_type: string;
  target_id: string;
  conversation_id: string;
  message_ref?: string;
  file_ref?: string;
  content_sha256: string;
  accepted_at: string;
}

/** The simulator's whole state, in memory; reset() returns it to the seed. */
export class SimState {
  readonly account: BridgeAccount;
  readonly faults = new Faults();
  loggedIn!: boolean;
  /**
   * Whether a repeated client_message_id is answered from its first send (the
   * protocol). Off, every send delivers: a test then sees any blind resend as
   * a second delivery instead of having the bridge hide it.
   */
  dedupe!: boolean;
  world!: World;
  sends!: Map<string, SendRecord>;
  deliveries!: Delivery[];
  private readonly seeded: World;

  constructor(
    seed: SimSeed,
    private readonly loggedInAtStart: boolean,
  ) {
    this.account = { ...seed.account };
    this.seeded = worldFromSeed(seed);
    this.reset();
  }

  reset(): void {
    const s = this.seeded;
    // Shallow copies are enough: records are never changed, only added.
    this.world = { contacts: [...s.contacts], groups: [...s.groups], conversations: [...s.conversations], messages: [...s.messages], files: [...s.files] };
    this.sends = new Map();
    this.deliveries = [];
    this.faults.clear();
    this.loggedIn = this.loggedInAtStart;
    this.dedupe = true;
  }

  contact(id: string): BridgeContact | undefined {
    return this.world.contacts.find((c) => c.contact_id === id);
  }

  group(id: string): BridgeGroup | undefined {
    return this.world.groups.find((g) => g.group_id === id);
  }

  conversation(id: string): BridgeConversation | undefined {
    return this.world.conversations.find((c) => c.conversation_id === id);
  }

  message(id: string): Message | undefined {
    return this.world.messages.find((m) => m.message_id === id);
  }

  file(id: string): StoredFile | undefined {
    return this.world.files.find((f) => f.meta.file_id === id);
  }
}

/** The next free id of a family (`m_000301` after 300 messages), skipping any a custom seed already took. */
export function nextId(prefix: string, width: number, taken: string[]): string {
  const used = new Set(taken);
  for (let n = taken.length + 1; ; n++) {
    const id = `${prefix}${String(n).padStart(width, '0')}`;
    if (!used.has(id)) return id;
  }
}
