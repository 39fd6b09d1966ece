import fs from 'node:fs';
import path from 'node:path';
import { ConnectorError } from '../../src/common/isphere/errors';
import { AuditTrail } from '../../src/isphere/audit';
import { answer } from '../../src/registry/isphere/common';
import type { EnvelopeError } from '../../src/registry/isphere/envelope';
import type { ToolContext } from '../../src/registry/types';
import { projectRoot } from '../support/processes';

/**
 * The audit object against the spec's "Common audit fields" (their keys as
 * test/contract/isphere.json transcribes them), and the error envelope.
 */
const specAuditKeys = (): string[] => (JSON.parse(fs.readFileSync(path.join(projectRoot, 'test', 'contract', 'isphere.json'), 'utf8')) as { audit: string[] }).audit;

const clock = () => {
  let t = Date.parse('2026-12-01T10:00:00.000Z');
  return () => (t += 250);
};

it('carries every field the spec names, and only two of its own: fallbacks and replayed', () => {
  const audit = new AuditTrail('isphere_search_contacts', { dryRun: false }).finish('ok');
  const ours = Object.keys(audit);
  expect(specAuditKeys().every((k) => ours.includes(k))).toBe(true);
  expect(ours.filter((k) => !specAuditKeys().includes(k)).sort()).toEqual(['fallbacks', 'replayed']);
});

it('times the call in RFC3339 UTC with milliseconds and gives each call its own request id', () => {
  const a = new AuditTrail('isphere_search_groups', { dryRun: false }, clock()).note({ source: 'bridge' });
  const answer = a.ok({ groups: [], next_cursor: null });
  expect(answer).toMatchObject({ ok: true, groups: [], next_cursor: null });
  expect(answer.audit).toMatchObject({ tool: 'isphere_search_groups', source: 'bridge', result: 'ok', started_at: '2026-12-01T10:00:00.250Z', finished_at: '2026-12-01T10:00:00.500Z' });
  expect(answer.audit.request_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(new AuditTrail('x', { dryRun: true }).finish('ok').request_id).not.toBe(answer.audit.request_id);
});

it('turns a connector refusal into the envelope, moving the sources passed into the audit', () => {
  const err = new ConnectorError('NOT_LOGGED_IN', 'No one is logged in.', false, { fallbacks: [{ source: 'bridge', code: 'NOT_LOGGED_IN' }], bridge_code: 'not_logged_in' });
  const env = new AuditTrail('isphere_search_contacts', { dryRun: false }).error(err);
  expect(env).toMatchObject({ ok: false, error: { code: 'NOT_LOGGED_IN', message: 'No one is logged in.', retryable: false, details: { bridge_code: 'not_logged_in' } } });
  expect(env.error.details).not.toHaveProperty('fallbacks');
  expect(env.audit).toMatchObject({ result: 'error', source: null, fallbacks: [{ source: 'bridge', code: 'NOT_LOGGED_IN' }] });
});

it('answers anything unexpected as INTERNAL_ERROR without its text', () => {
  const env = new AuditTrail('isphere_search_contacts', { dryRun: false }).error(new Error('ENOENT /var/lib/secret/path at Object.<anonymous>'));
  expect(env.error).toEqual({ code: 'INTERNAL_ERROR', message: 'Dipper failed to handle this call; the failure is logged.', retryable: true });
  expect(JSON.stringify(env)).not.toMatch(/secret|ENOENT|anonymous/);
});

it('answers a Temporal call that got no answer as a retryable unavailable, not as a failure nobody expected', async () => {
  const ctx = { isphere: {} } as unknown as ToolContext;
  const deadline = Object.assign(new Error('4 DEADLINE_EXCEEDED: Deadline exceeded'), { code: 4 });
  const envelopeOf = (err: unknown) =>
    answer('isphere_send_message', ctx, false, async () => {
      throw err;
    }).then(
      () => undefined,
      (e: unknown) => (e as EnvelopeError).envelope.error,
    );
  expect(await envelopeOf(deadline)).toMatchObject({ code: 'INTERNAL_ERROR', retryable: true, details: { reason: 'unavailable' } });
  expect(await envelopeOf(new Error('a bug'))).toEqual({ code: 'INTERNAL_ERROR', message: 'Dipper failed to handle this call; the failure is logged.', retryable: true });
});
