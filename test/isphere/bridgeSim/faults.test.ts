import timers from 'node:timers/promises';
import { eventually } from '../../support/clients';
import { BRIDGE, CONTROL, fileSend, messageSend, Sim } from './harness';

const SENDS = [
  {
    route: 'messages',
    path: '/v1/messages',
    body: () => messageSend(),
    ref: 'message_ref',
  },
  {
    route: 'files',
    path: '/v1/files',
    body: () => fileSend(),
    ref: 'file_ref',
  },
];

/** A request whose connection the simulator ends without answering: fetch fails with the socket's error. */
async function dropped(url: string, init: RequestInit): Promise<unknown> {
  try {
    const res = await fetch(url, init);
    return `answered ${res.status}`;
  } catch (err) {
    return err;
  }
}

describe('isphere bridge simulator: faults', () => {
  const sim = new Sim();
  beforeAll(() => sim.start());
  afterAll(() => sim.stop());
  afterEach(() => sim.control('/_sim/reset'));

  const plan = (fault: Record<string, unknown>) => sim.control('/_sim/faults', fault);

  it.each(SENDS)('accept_then_drop on $route records the send, answers nothing, and a repeat is a duplicate', async ({ route, path, body, ref }) => {
    expect((await plan({ route, mode: 'accept_then_drop', count: 1 })).status).toBe(200);
    const sent = body();
    const err = await dropped(sim.url + path, { method: 'POST', headers: { authorization: `Bearer ${BRIDGE}`, 'content-type': 'application/json' }, body: JSON.stringify(sent) });
    // fetch's TypeError comes from Node's realm, not the test's, so it is checked by name.
    expect(err).toMatchObject({ name: 'TypeError', message: 'fetch failed', cause: { code: 'UND_ERR_SOCKET' } });

    const deliveries = await sim.deliveries();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0].client_message_id).toBe(sent.client_message_id);
    const lookup = await sim.get(`/v1/sends/${sent.client_message_id}`);
    expect(lookup.status).toBe(200);
    expect(lookup.body[ref]).toBe(deliveries[0][ref]);

    const again = await sim.post(path, sent);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, [ref]: deliveries[0][ref] });
    expect(await sim.deliveries()).toHaveLength(1);
  });

  it.each(SENDS)('fail on $route answers 503 bridge_unavailable and delivers nothing, for count requests', async ({ route, path, body }) => {
    await plan({ route, mode: 'fail', count: 2 });
    const sent = body();
    for (let i = 0; i < 2; i++) {
      const reply = await sim.post(path, sent);
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe('bridge_unavailable');
    }
    expect(await sim.deliveries()).toEqual([]);
    expect((await sim.get(`/v1/sends/${sent.client_message_id}`)).status).toBe(404);
    expect((await sim.post(path, sent)).status).toBe(201);
  });

  it('delay on messages waits, then accepts as usual', async () => {
    // The simulator's wait is held here until the test lets it go, so "it waits" is an order, not a stopwatch:
    // the delayed send answers only after its wait ends, and a send that meets no fault answers meanwhile.
    const waits: { ms: unknown; release: () => void }[] = [];
    const realSleep = timers.setTimeout;
    const spy = jest.spyOn(timers, 'setTimeout').mockImplementation(((ms: number, value: unknown, opts: unknown) => {
      if (ms !== 150) return realSleep(ms, value, opts as never);
      return new Promise((resolve) => waits.push({ ms, release: () => resolve(value as never) }));
    }) as typeof timers.setTimeout);
    try {
      await plan({ route: 'messages', mode: 'delay', count: 1, delay_ms: 150 });
      const held = SENDS[0].body();
      let settled = false;
      const delayed = sim.post('/v1/messages', held).finally(() => (settled = true));
      // A positive sign that the send met the fault: the simulator asked to wait delay_ms, and the plan's one use is spent.
      await eventually(async () => (waits.length > 0 ? true : undefined), undefined, 5);
      expect(waits.map((w) => w.ms)).toEqual([150]);
      expect((await plan({ route: 'files', mode: 'fail', count: 0 })).body.faults).toEqual([]);
      // While it waits, the next send meets no fault: it is answered, asks for no wait, and is delivered first.
      const quick = SENDS[0].body();
      expect((await sim.post('/v1/messages', quick)).status).toBe(201);
      expect(settled).toBe(false);
      expect(waits).toHaveLength(1);
      expect((await sim.deliveries()).map((d) => d.client_message_id)).toEqual([quick.client_message_id]);
      // The wait ends: the delayed send is accepted as usual, after the quick one.
      waits[0].release();
      expect((await delayed).status).toBe(201);
      expect((await sim.deliveries()).map((d) => d.client_message_id)).toEqual([quick.client_message_id, held.client_message_id]);
    } finally {
      waits.forEach((w) => w.release());
      spy.mockRestore();
    }
  });

  it('delay still delivers a send whose caller gave up waiting, as a slow bridge would', async () => {
    await plan({ route: 'messages', mode: 'delay', count: 1, delay_ms: 200 });
    const sent = SENDS[0].body();
    const gaveUp = fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BRIDGE}`, 'content-type': 'application/json' },
      body: JSON.stringify(sent),
      signal: AbortSignal.timeout(50),
    });
    await expect(gaveUp).rejects.toThrow();
    // The send lands once the wait is over, whenever that is on this machine.
    await eventually(async () => ((await sim.get(`/v1/sends/${sent.client_message_id}`)).status === 200 ? true : undefined), undefined, 20);
  });

  it.each([
    { mode: 'fail', check: (r: unknown) => expect(r).toMatchObject({ status: 503 }) },
    { mode: 'accept_then_drop', check: (r: unknown) => expect(r).toMatchObject({ name: 'TypeError', cause: { code: 'UND_ERR_SOCKET' } }) },
  ])('$mode on reads touches the read routes only, not status, sends or the send lookup', async ({ mode, check }) => {
    await plan({ route: 'reads', mode, count: 1 });
    expect((await sim.get('/v1/status')).status).toBe(200);
    expect((await sim.post('/v1/messages', SENDS[0].body())).status).toBe(201);
    expect((await sim.get('/v1/sends/nothing-here')).status).toBe(404);
    const hit = await sim.get('/v1/contacts').catch((err: unknown) => err);
    check(hit);
    expect((await sim.get('/v1/contacts')).status).toBe(200);
  });

  it.each(['/v1/contacts', '/v1/groups', '/v1/conversations', '/v1/conversations/conv_d_0001/messages', '/v1/files', '/v1/files/f_0001/content'])(
    'fail on reads covers %s',
    async (path) => {
      await plan({ route: 'reads', mode: 'fail', count: 1 });
      expect((await sim.get(path)).status).toBe(503);
      expect((await sim.get(path)).status).toBe(200);
    },
  );

  it('a new plan replaces the old one, count 0 clears it, and reset clears them all', async () => {
    await plan({ route: 'messages', mode: 'fail', count: 5 });
    expect((await plan({ route: 'messages', mode: 'fail', count: 1 })).body.faults).toEqual([{ route: 'messages', mode: 'fail', count: 1 }]);
    await plan({ route: 'files', mode: 'delay', count: 3, delay_ms: 10 });
    expect((await plan({ route: 'files', mode: 'fail', count: 0 })).body.faults).toEqual([{ route: 'messages', mode: 'fail', count: 1 }]);
    await sim.control('/_sim/reset');
    expect((await sim.post('/v1/messages', SENDS[0].body())).status).toBe(201);
  });

  it.each([
    { name: 'an unknown route', body: { route: 'contacts', mode: 'fail', count: 1 }, field: 'route' },
    { name: 'an unknown mode', body: { route: 'reads', mode: 'slow', count: 1 }, field: 'mode' },
    { name: 'a negative count', body: { route: 'reads', mode: 'fail', count: -1 }, field: 'count' },
    { name: 'delay without delay_ms', body: { route: 'reads', mode: 'delay', count: 1 }, field: 'delay_ms' },
    { name: 'delay_ms without delay', body: { route: 'reads', mode: 'fail', count: 1, delay_ms: 5 }, field: 'delay_ms' },
    { name: 'an unknown field', body: { route: 'reads', mode: 'fail', count: 1, probability: 0.5 }, field: 'probability' },
  ])('/_sim/faults refuses $name', async ({ body, field }) => {
    const reply = await sim.request('POST', '/_sim/faults', { token: CONTROL, body });
    expect(reply.status).toBe(400);
    expect(reply.body.error.code).toBe('invalid_argument');
    expect(reply.body.error.message.startsWith(`${field}:`)).toBe(true);
  });
});
