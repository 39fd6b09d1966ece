import crypto from 'node:crypto';
import { expiryOf, mintAgentToken, verifyAgentToken } from '../../src/auth/tokens';

const mint = (secret: string, run: string, agent: string, ttl: number, now: number, gen = 1) =>
  mintAgentToken(secret, { run_id: run, agent_id: agent, gen, exp: expiryOf(now, ttl) });

const SECRET = 'unit-test-secret';
const NOW = Date.UTC(2030, 0, 1);

/** Replaces one character of the signature part with a different base64url character. */
function flipSignatureChar(token: string, index: number): string {
  const dot = token.indexOf('.');
  const at = dot + 1 + index;
  const replacement = token[at] === 'A' ? 'B' : 'A';
  return token.slice(0, at) + replacement + token.slice(at + 1);
}

describe('agent tokens', () => {
  const token = mint(SECRET, 'run_1', 'ag_1', 3600, NOW);

  it('round-trips run, agent and expiry', () => {
    expect(token.startsWith('dpa_')).toBe(true);
    expect(verifyAgentToken([SECRET], token, NOW)).toEqual({ run_id: 'run_1', agent_id: 'ag_1', gen: 1, exp: NOW / 1000 + 3600 });
  });

  it('carries its launch generation, and is the same token every time the same launch asks', () => {
    const third = mint(SECRET, 'run_1', 'ag_1', 3600, NOW, 3);
    expect(verifyAgentToken([SECRET], third, NOW)?.gen).toBe(3);
    expect(mint(SECRET, 'run_1', 'ag_1', 3600, NOW, 3)).toBe(third);
  });

  it('counts a token from before generations as generation 0', () => {
    const body = Buffer.from(JSON.stringify({ run_id: 'run_1', agent_id: 'ag_1', exp: NOW / 1000 + 60 })).toString('base64url');
    const mac = crypto.createHmac('sha256', SECRET).update(body).digest('base64url');
    expect(verifyAgentToken([SECRET], `dpa_${body}.${mac}`, NOW)?.gen).toBe(0);
  });

  it('is accepted under any secret of a rotation, and under no other', () => {
    expect(verifyAgentToken(['new-secret', SECRET], token, NOW)).not.toBeNull();
    expect(verifyAgentToken(['new-secret'], token, NOW)).toBeNull();
    expect(verifyAgentToken([], token, NOW)).toBeNull();
  });

  it('is valid until its expiry and not at it', () => {
    expect(verifyAgentToken([SECRET], token, NOW + 3600_000 - 1)).not.toBeNull();
    expect(verifyAgentToken([SECRET], token, NOW + 3600_000)).toBeNull();
  });

  it('refuses a token minted in the past whose lifetime is over', () => {
    const old = mint(SECRET, 'run_1', 'ag_1', 60, NOW - 61_000);
    expect(verifyAgentToken([SECRET], old, NOW)).toBeNull();
  });

  it.each([0, 10, 42])('refuses a signature changed at character %i', (i) => {
    expect(verifyAgentToken([SECRET], flipSignatureChar(token, i), NOW)).toBeNull();
  });

  it('refuses claims swapped under a valid signature', () => {
    const [body, mac] = token.slice(4).split('.');
    const other = mint(SECRET, 'run_1', 'ag_root', 3600, NOW).slice(4).split('.')[0];
    expect(other).not.toBe(body);
    expect(verifyAgentToken([SECRET], `dpa_${other}.${mac}`, NOW)).toBeNull();
  });

  it('refuses a token signed with another secret', () => {
    expect(verifyAgentToken(['another-secret'], token, NOW)).toBeNull();
    expect(verifyAgentToken([SECRET], mint('another-secret', 'run_1', 'ag_1', 3600, NOW), NOW)).toBeNull();
  });

  it.each([
    ['another prefix', token.replace(/^dpa_/, 'dpo_')],
    ['no prefix', token.slice(4)],
    ['an upper-case prefix', token.replace(/^dpa_/, 'DPA_')],
  ])('refuses %s', (_name, bad) => {
    expect(verifyAgentToken([SECRET], bad, NOW)).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['the prefix alone', 'dpa_'],
    ['no signature', 'dpa_abc'],
    ['an empty signature', 'dpa_abc.'],
    ['an empty body', 'dpa_.abc'],
    ['three parts', `${token}.extra`],
    ['whitespace', ' '.repeat(64)],
    ['unicode', `dpa_${'é'.repeat(20)}.${'ü'.repeat(43)}`],
    ['an operator-style token', 'dpo_0123456789abcdef'],
  ])('refuses garbage: %s', (_name, bad) => {
    expect(verifyAgentToken([SECRET], bad, NOW)).toBeNull();
  });

  it('refuses a correctly signed body that is not a claims object', () => {
    const sign = (body: string) => crypto.createHmac('sha256', SECRET).update(body).digest('base64url');
    for (const payload of ['null', '[]', '"x"', '{"run_id":"r","agent_id":"a"}', '{"run_id":1,"agent_id":"a","exp":9999999999}', 'not json']) {
      const body = Buffer.from(payload).toString('base64url');
      expect(verifyAgentToken([SECRET], `dpa_${body}.${sign(body)}`, NOW)).toBeNull();
    }
  });
});
