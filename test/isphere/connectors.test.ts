import { BridgeClient } from '../../src/common/isphere/bridgeClient';
import { failureOf } from './failure';
import { ConnectorError, type IsphereCode } from '../../src/common/isphere/errors';
import { startBridgeSim } from '../../src/isphere/bridgeSim';
import {
  BridgeConnector,
  matchConfidence,
  MockConnector,
  Sources,
  UnavailableConnector,
  type Capability,
  type Connector,
  type SourceName,
} from '../../src/isphere/connectors';

/** Choosing a source, and the bridge and mock connectors against the bridge simulator over real HTTP. */
const bridgeToken = 'bridge-secret-token';
const controlToken = 'sim-control-token';
let sim: { url: string; close(): Promise<void> };
let bridge: BridgeConnector;

const control = (path: string, body: unknown) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${controlToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  sim = await startBridgeSim({ bridgeToken, controlToken });
  bridge = new BridgeConnector(new BridgeClient({ baseUrl: sim.url, token: bridgeToken, timeoutMs: 2000 }));
});
beforeEach(() => control('/_sim/reset', {}));
afterAll(() => sim.close());

/** A connector that answers with its name, or fails with a code, and counts its calls. */
function fake(name: SourceName, outcome: IsphereCode | 'ok', capabilities: Capability[] = ['search_contacts', 'search_groups']) {
  const calls: string[] = [];
  const answer = async () => {
    calls.push(name);
    if (outcome !== 'ok') throw new ConnectorError(outcome, `${name} says ${outcome}`);
    return { items: [], next_cursor: null };
  };
  const connector: Connector = { name, capabilities: new Set(capabilities), searchContacts: answer, searchGroups: answer };
  return { connector, calls };
}

const contacts = { query: 'li wei', limit: 20, include_inactive: false };

describe('choosing a source', () => {
  it('auto tries bridge, local_readonly, network, uia in that order, and reports every source it moved past', async () => {
    const b = fake('bridge', 'SOURCE_UNAVAILABLE');
    const l = fake('local_readonly', 'NOT_LOGGED_IN');
    const n = fake('network', 'TIMEOUT');
    const u = fake('uia', 'ok');
    const sources = new Sources([u.connector, n.connector, l.connector, b.connector]);
    const got = await sources.read('auto', 'search_contacts', (c) => c.searchContacts(contacts));
    expect(got.source).toBe('uia');
    expect(got.fallbacks).toEqual([
      { source: 'bridge', code: 'SOURCE_UNAVAILABLE' },
      { source: 'local_readonly', code: 'NOT_LOGGED_IN' },
      { source: 'network', code: 'TIMEOUT' },
    ]);
  });

  it('auto stops at an answer that is not about availability, and the error still names the sources passed', async () => {
    const b = fake('bridge', 'TIMEOUT');
    const l = fake('local_readonly', 'PERMISSION_DENIED');
    const u = fake('uia', 'ok');
    const err = await failureOf(new Sources([b.connector, l.connector, u.connector]).read('auto', 'search_contacts', (c) => c.searchContacts(contacts)));
    expect(err.code).toBe('PERMISSION_DENIED');
    expect(err.details.fallbacks).toEqual([{ source: 'bridge', code: 'TIMEOUT' }]);
    expect(u.calls).toEqual([]);
  });

  it('auto skips a source that cannot do what the call needs, without counting it as tried', async () => {
    const b = fake('bridge', 'ok', ['search_groups']);
    const l = fake('local_readonly', 'ok');
    const got = await new Sources([b.connector, l.connector]).read('auto', 'search_contacts', (c) => c.searchContacts(contacts));
    expect([got.source, got.fallbacks, b.calls]).toEqual(['local_readonly', [], []]);
  });

  it('when nothing answers, a missing login outranks a timeout, which outranks no source', async () => {
    const read = (...cs: Connector[]) => failureOf(new Sources(cs).read('auto', 'search_groups', (c) => c.searchGroups({ query: 'x', limit: 5, include_archived: false })));
    const loggedOut = await read(fake('bridge', 'TIMEOUT').connector, fake('local_readonly', 'NOT_LOGGED_IN').connector);
    expect([loggedOut.code, loggedOut.retryable]).toEqual(['NOT_LOGGED_IN', false]);
    expect((await read(fake('bridge', 'SOURCE_UNAVAILABLE').connector, fake('local_readonly', 'TIMEOUT').connector)).code).toBe('TIMEOUT');
    const none = await read(fake('bridge', 'SOURCE_UNAVAILABLE').connector, new UnavailableConnector('uia'));
    expect([none.code, none.details.fallbacks]).toEqual(['SOURCE_UNAVAILABLE', [{ source: 'bridge', code: 'SOURCE_UNAVAILABLE' }]]);
  });

  it('a named source is used alone, and one that cannot do the call is SOURCE_UNAVAILABLE without asking it', async () => {
    const b = fake('bridge', 'SOURCE_UNAVAILABLE');
    const l = fake('local_readonly', 'ok', ['search_groups']);
    const sources = new Sources([b.connector, l.connector]);
    expect((await failureOf(sources.read('bridge', 'search_contacts', (c) => c.searchContacts(contacts)))).details).toEqual({});
    const err = await failureOf(sources.read('local_readonly', 'search_contacts', (c) => c.searchContacts(contacts)));
    expect([err.code, l.calls]).toEqual(['SOURCE_UNAVAILABLE', []]);
    expect((await failureOf(sources.read('uia', 'search_contacts', (c) => c.searchContacts(contacts)))).code).toBe('SOURCE_UNAVAILABLE');
  });

  it("an operator's mock stands in for every source, whatever the caller prefers", async () => {
    const b = fake('bridge', 'ok');
    const got = await new Sources([b.connector], new MockConnector()).read('bridge', 'search_contacts', (c) => c.searchContacts(contacts));
    expect(got.source).toBe('mock');
    expect(got.value.items.every((c) => c.source === 'mock')).toBe(true);
    expect(b.calls).toEqual([]);
  });
});

describe('the bridge connector', () => {
  it('finds both people called Li Wei as exact matches, labelled with their source, and leaves out who has left', async () => {
    const page = await bridge.searchContacts(contacts);
    const exact = page.items.filter((c) => c.confidence === 1);
    expect(exact.map((c) => c.account).sort()).toEqual(['li.wei', 'li.wei2']);
    expect(page.items.every((c) => c.source === 'bridge')).toBe(true);
    const zhang = await bridge.searchContacts({ query: 'zhang wei', limit: 20, include_inactive: false });
    expect(zhang.items.map((c) => c.account)).toEqual(['zhang.wei']);
    const withInactive = await bridge.searchContacts({ query: 'zhang wei', limit: 20, include_inactive: true });
    expect(withInactive.items.map((c) => c.account).sort()).toEqual(['zhang.wei', 'zhang.wei.old']);
  });

  it('pages through every contact once, with the cursor the bridge gave', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await bridge.searchContacts({ query: '', limit: 9, include_inactive: true, cursor });
      seen.push(...page.items.map((c) => c.contact_id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThan(25);
  });

  it('leaves archived groups out unless asked, and rates a name that starts with the query above one that merely contains it', async () => {
    const groups = await bridge.searchGroups({ query: 'finance team', limit: 20, include_archived: false });
    expect(groups.items.map((g) => [g.display_name, g.confidence])).toEqual([
      ['Finance Team', 1],
      ['Finance Team (Shanghai)', 0.9],
    ]);
    expect((await bridge.searchGroups({ query: 'office move', limit: 20, include_archived: false })).items).toEqual([]);
    expect((await bridge.searchGroups({ query: 'office move', limit: 20, include_archived: true })).items.map((g) => g.display_name)).toEqual(['Office Move 2025']);
  });

  it('says NOT_LOGGED_IN when no one is logged in, and auto then reports the bridge it moved past', async () => {
    await control('/_sim/session', { logged_in: false });
    expect((await failureOf(bridge.searchContacts(contacts))).code).toBe('NOT_LOGGED_IN');
    const err = await failureOf(new Sources([bridge, new UnavailableConnector('uia')]).read('auto', 'search_contacts', (c) => c.searchContacts(contacts)));
    expect([err.code, err.details.fallbacks]).toEqual(['NOT_LOGGED_IN', [{ source: 'bridge', code: 'NOT_LOGGED_IN' }]]);
  });

  it('a bridge that is not there is SOURCE_UNAVAILABLE', async () => {
    const closed = await startBridgeSim({ bridgeToken, controlToken });
    await closed.close();
    const gone = new BridgeConnector(new BridgeClient({ baseUrl: closed.url, token: bridgeToken, timeoutMs: 2000 }));
    expect((await failureOf(gone.searchContacts(contacts))).code).toBe('SOURCE_UNAVAILABLE');
  });
});

it('the mock connector holds the same seeded people as the simulator, under the mock label', async () => {
  const mock = await new MockConnector().searchContacts(contacts);
  const real = await bridge.searchContacts(contacts);
  expect(mock.items.map((c) => [c.contact_id, c.confidence])).toEqual(real.items.map((c) => [c.contact_id, c.confidence]));
  expect(new Set(mock.items.map((c) => c.source))).toEqual(new Set(['mock']));
});

it('confidence: whole name or account 1, prefix 0.9, inside the name 0.75, another field 0.5', () => {
  expect(matchConfidence('Li Wei', 'li wei')).toBe(1);
  expect(matchConfidence('li.wei2', 'Li Wei', [], ['li.wei2'])).toBe(1);
  expect(matchConfidence('fin', 'Finance Team')).toBe(0.9);
  expect(matchConfidence('team', 'Finance Team')).toBe(0.75);
  expect(matchConfidence('accountant', 'Li Wei', ['Finance', 'Senior Accountant'])).toBe(0.5);
  expect(matchConfidence('', 'anyone')).toBe(1);
});
