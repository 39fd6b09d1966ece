import { BridgeError } from './errors';
import type { MessageBody } from './inputs';
import { nextId, type SimState } from './state';
import type { BridgeConversation } from '../../common/isphere/bridgeRecords';

/**
 * The conversation a send lands in. Writing to a contact without a direct
 * conversation yet opens one, as the client does. Only people and groups
 * that can still answer are writable: not an inactive contact, an archived
 * group, or the system conversation (its notices take no replies).
 */
export function conversationFor(state: SimState, type: MessageBody['target_type'], id: string): BridgeConversation {
  if (type === 'contact') {
    const contact = state.contact(id);
    if (!contact) throw notFound(type, id);
    if (!contact.active) throw unavailable(`Contact ${id} is inactive.`);
    return peerConversation(state, 'direct', id, contact.display_name);
  }
  if (type === 'group') {
    const group = state.group(id);
    if (!group) throw notFound(type, id);
    if (group.archived) throw unavailable(`Group ${id} is archived.`);
    return peerConversation(state, 'group', id, group.display_name);
  }
  const conversation = state.conversation(id);
  if (!conversation) throw notFound(type, id);
  if (conversation.conversation_type === 'system') throw unavailable(`Conversation ${id} is the system conversation; it takes no messages.`);
  const peer = conversation.peer_id;
  if (conversation.conversation_type === 'direct' && peer !== null && state.contact(peer)?.active === false) {
    throw unavailable(`Conversation ${id} is with an inactive contact.`);
  }
  if (conversation.conversation_type === 'group' && peer !== null && state.group(peer)?.archived) {
    throw unavailable(`Conversation ${id} belongs to an archived group.`);
  }
  return conversation;
}

function peerConversation(state: SimState, type: 'direct' | 'group', peerId: string, displayName: string): BridgeConversation {
  const found = state.world.conversations.find((c) => c.conversation_type === type && c.peer_id === peerId);
  if (found) return found;
  const prefix = type === 'direct' ? 'conv_d_' : 'conv_g_';
  const taken = state.world.conversations.filter((c) => c.conversation_id.startsWith(prefix)).map((c) => c.conversation_id);
  const opened: BridgeConversation = { conversation_id: nextId(prefix, 4, taken), conversation_type: type, display_name: displayName, peer_id: peerId };
  state.world.conversations.push(opened);
  return opened;
}

const notFound = (type: string, id: string) => new BridgeError(404, 'target_not_found', `No ${type} ${id}.`);
const unavailable = (message: string) => new BridgeError(409, 'target_unavailable', message);
