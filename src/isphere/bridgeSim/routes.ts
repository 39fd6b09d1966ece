import express, { Router, type Request } from 'express';
import { requireBearer } from './auth';
import { parseInput } from './errors';
import { contactsQuery, conversationsQuery, fileBody, filesQuery, groupsQuery, messageBody, messagesQuery, sendParams, withoutEmpty } from './inputs';
import { fileContent, getContact, getConversation, getGroup, listContacts, listConversations, listFiles, listGroups, listMessages } from './reads';
import { findSend, sendFile, sendMessage } from './sends';
import { dataRoute, type Reply } from './serve';
import type { SimState } from './state';

export const BRIDGE_VERSION = 'isphere-bridge-sim/1.0.0';
/** A 20 MiB file is about 27 MiB of base64, plus the JSON around it. */
export const BODY_LIMIT = '30mb';

const ok = (json: unknown): Reply => ({ status: 200, json });
const param = (req: Request, name: string) => String(req.params[name]);

/**
 * The protocol's /v1 routes. Authentication comes before the body is read,
 * so nobody without the token can make the bridge parse 30 MiB. Faults
 * touch the routes of their group only: `reads` is the "Reads" section of
 * the protocol; status and the send lookup are never faulted.
 */
export function bridgeRoutes(state: SimState, bridgeToken: string, now: () => number): Router {
  const router = Router();
  const auth = requireBearer(bridgeToken, 'bridge token');
  const body = express.json({ limit: BODY_LIMIT });
  const acceptedAt = () => new Date(now()).toISOString();

  // The one route that answers with nobody logged in: it is how a connector finds out.
  router.get('/v1/status', auth, (_req, res) => {
    res.json({ logged_in: state.loggedIn, account: state.loggedIn ? { ...state.account } : null, bridge_version: BRIDGE_VERSION });
  });

  router.get('/v1/contacts', auth, dataRoute(state, 'reads', (req) => ok(listContacts(state, parseInput(contactsQuery, withoutEmpty(req.query))))));
  router.get('/v1/groups', auth, dataRoute(state, 'reads', (req) => ok(listGroups(state, parseInput(groupsQuery, withoutEmpty(req.query))))));
  router.get('/v1/conversations', auth, dataRoute(state, 'reads', (req) => ok(listConversations(state, parseInput(conversationsQuery, withoutEmpty(req.query))))));
  router.get('/v1/contacts/:contact_id', auth, dataRoute(state, 'reads', (req) => ok(getContact(state, param(req, 'contact_id')))));
  router.get('/v1/groups/:group_id', auth, dataRoute(state, 'reads', (req) => ok(getGroup(state, param(req, 'group_id')))));
  router.get('/v1/conversations/:conversation_id', auth, dataRoute(state, 'reads', (req) => ok(getConversation(state, param(req, 'conversation_id')))));
  router.get(
    '/v1/conversations/:conversation_id/messages',
    auth,
    dataRoute(state, 'reads', (req) => ok(listMessages(state, param(req, 'conversation_id'), parseInput(messagesQuery, withoutEmpty(req.query))))),
  );
  router.get('/v1/files', auth, dataRoute(state, 'reads', (req) => ok(listFiles(state, parseInput(filesQuery, withoutEmpty(req.query))))));
  router.get('/v1/files/:file_id/content', auth, dataRoute(state, 'reads', (req) => ({ file: fileContent(state, param(req, 'file_id')) })));

  router.post(
    '/v1/messages',
    auth,
    body,
    dataRoute(state, 'messages', (req) => {
      const answer = sendMessage(state, parseInput(messageBody, req.body), acceptedAt());
      return { status: answer.duplicate ? 200 : 201, json: answer };
    }),
  );
  router.post(
    '/v1/files',
    auth,
    body,
    dataRoute(state, 'files', (req) => {
      const answer = sendFile(state, parseInput(fileBody, req.body), acceptedAt());
      return { status: answer.duplicate ? 200 : 201, json: answer };
    }),
  );
  router.get(
    '/v1/sends/:client_message_id',
    auth,
    dataRoute(state, null, (req) => ok(findSend(state, parseInput(sendParams, req.params).client_message_id))),
  );
  return router;
}
