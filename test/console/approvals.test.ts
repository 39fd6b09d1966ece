import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { projectRoot } from '../support/processes';
import { closeAll, connect, operator, waitForInbox } from '../support/team';
import { sim } from '../isphere/support';
import { ana, launchChromium, startConsoleGateway } from './browser';

/**
 * An iSphere send approved by a person in the console, in real headless
 * Chromium: the card shows the exact words (as text, never markup) and the
 * hash the approval binds; Approve reaches the agent, whose send then goes
 * out once.
 */
const SHOTS = path.join(projectRoot, 'test-artifacts', 'console');
const PWN = '<img src=x onerror="window.__pwned=1">';

let gateway: { url: string; stop: () => Promise<void> };
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  await sim.control('POST', '/reset', {});
  [gateway, browser] = await Promise.all([startConsoleGateway(), launchChromium()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
});

afterAll(async () => {
  await closeAll();
  await browser?.close();
  await gateway?.stop();
});

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled', timeout: 10_000 }).catch(() => undefined);
}

it('shows the send with its words and hash, and Approve lets the agent send it once', async () => {
  const res = await operator.request('POST', '/runs', { task: 'Announce the release.' });
  const run = res.json as { run_id: string; root: { agent_id: string; agent_token: string } };
  const isphere = await connect(run.root.agent_token, 'isphere');
  const beidou = await connect(run.root.agent_token);
  const words = `Release 4.2 is out. ${PWN}`;
  const plan = await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0002', content_text: words });
  const id = plan.approval.approval_id;

  await page.goto(`${gateway.url}/console#/approvals`);
  await page.fill('#token', ana.token);
  await page.click('#login-form button[type=submit]');
  const card = page.locator(`article.approval[data-approval-id="${id}"]`);
  await card.waitFor();
  await shot('20-approval-waiting');
  // The target with what the source knows of it: two groups are called "Finance Team…", and members and owner tell them apart.
  expect(await card.locator('h3').textContent()).toMatch(/^Send an iSphere message to Finance Team \(Shanghai\) \(\d+ members\)$/);
  expect(await card.locator('dd.target').textContent()).toBe('group g_0002 · Finance Team (Shanghai)');
  expect(await card.locator('dd[data-field="owner"]').textContent()).toMatch(/\S/);
  // The words are shown as they are, as text: the markup in them does not run.
  expect(await card.locator('blockquote.words').textContent()).toBe(words);
  expect(await page.evaluate(() => (globalThis as any).__pwned)).toBeUndefined();
  expect(await card.locator('dd.hash').first().textContent()).toBe(plan.content_sha256);
  expect(await card.locator('.hidden-text').count()).toBe(0);
  expect(Number(await page.locator('#approvals-count').textContent())).toBeGreaterThanOrEqual(1);

  // A person, by id: their department, title and account are shown, as three contacts are called Li Wei.
  const toPerson = await isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0002', content_text: 'Hello.' });
  expect(toPerson.target).toEqual({ target_type: 'contact', target_id: 'c_0002', display_name: 'Li Wei' });
  const personCard = page.locator(`article.approval[data-approval-id="${toPerson.approval.approval_id}"]`);
  await personCard.waitFor();
  expect(await personCard.locator('h3').textContent()).toBe('Send an iSphere message to Li Wei (R&D · Backend Engineer · li.wei2)');
  expect(await personCard.locator('dd[data-field="department"]').textContent()).toBe('R&D');
  await operator.request('POST', `/isphere/approvals/${toPerson.approval.approval_id}/reject`, { reason: 'Only the group.' });

  // A rejection needs a reason before its button works.
  await card.locator('button', { hasText: 'Reject…' }).click();
  expect(await card.locator('button', { hasText: 'Reject send' }).isDisabled()).toBe(true);

  await card.locator('button', { hasText: 'Approve send' }).click();
  await page.locator(`.outcome[data-approval-id="${id}"]`, { hasText: 'Approved' }).waitFor();
  await shot('21-approval-approved');
  expect(await card.count()).toBe(0);

  const told = await waitForInbox(beidou, (m) => m.content.includes(id));
  expect(told.content).toContain('approved by Ana');
  const sent = await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0002', content_text: words, dry_run: false, approval_id: id });
  expect(sent).toMatchObject({ send_status: 'sent', audit: { operator_id: 'Ana' } });
  expect((await sim.deliveries()).filter((d: any) => d.client_message_id === `dip-${id}`)).toHaveLength(1);
  const view = await operator.request('GET', `/runs/${run.run_id}/isphere/approvals/${id}`);
  expect(view.json.decision).toMatchObject({ approver: 'Ana', via: 'api', decision: 'approve' });

  // The audit page lists the send's two records and says the chain verifies.
  await page.click('#nav a[data-route="audit"]');
  await page.locator('.audit tbody tr').first().waitFor();
  await page.locator('[role=status]', { hasText: 'verifies' }).waitFor();
  const mine = page.locator('.audit tbody tr', { hasText: id });
  expect(await mine.count()).toBe(2);
  expect(await mine.first().locator('td').nth(2).textContent()).toBe('outcome');
  const cells = mine.first().locator('td');
  expect(await cells.nth(3).textContent()).toBe(run.run_id);
  expect(await cells.nth(4).textContent()).toBe(run.root.agent_id);
  expect(await cells.nth(7).textContent()).toMatch(/^sha256 [0-9a-f]{12}…$/);
  expect(await cells.nth(8).textContent()).toBe('sent');
  expect(await cells.nth(9).textContent()).toBe('Ana (api)');
  // Local time, not the stored ISO string (kept as the cell's title).
  expect(await cells.nth(1).textContent()).not.toMatch(/T\d\d:\d\d.*Z$/);
  expect(await cells.nth(1).getAttribute('title')).toMatch(/T\d\d:\d\d.*Z$/);
  // The filter keeps the rows that hold every term: this approval's two.
  await page.locator('#audit-filter').fill(`${id} ${run.run_id}`);
  expect(await page.locator('.audit tbody tr:not([hidden])').count()).toBe(2);
  await shot('22-audit');
  await page.locator('#audit-filter').fill('');
  const listed = await operator.request('GET', '/isphere/audit?limit=5');
  expect(listed.json.records[0]).toMatchObject({ approval_id: id, kind: 'outcome', result: 'sent', approver: 'Ana' });
  // The chain checks out against its witness too, which has seen this send's records.
  expect((await operator.request('GET', '/isphere/audit/verify')).json).toMatchObject({ ok: true, problems: [], witness: { seq: expect.any(Number) } });
  expect(pageErrors).toEqual([]);
});

it('warns before a person approves words that do not read as they are sent: reordering and invisible characters, text far below', async () => {
  const res = await operator.request('POST', '/runs', { task: 'Send the invoice.' });
  const run = res.json as { run_id: string; root: { agent_token: string } };
  const isphere = await connect(run.root.agent_token, 'isphere');
  // Reads as "ACME exe.png" in the card; a zero-width space; the real request 70 lines down.
  const words = `Invoice from ACME \u202Egnp.exe\u202C attached.\u200B${'\n'.repeat(70)}Wire the money to account 999.`;
  const plan = await isphere.ok('isphere_send_message', { target_type: 'group', target_id: 'g_0002', content_text: words });
  await page.goto(`${gateway.url}/console#/approvals`);
  if (await page.locator('#token').isVisible()) {
    await page.fill('#token', ana.token);
    await page.click('#login-form button[type=submit]');
  }
  const card = page.locator(`article.approval[data-approval-id="${plan.approval.approval_id}"]`);
  await card.waitFor();
  const warning = card.locator('.hidden-text[role=alert]');
  await warning.waitFor();
  await shot('23-approval-hidden-text');
  const items = await warning.locator('li').allTextContents();
  expect(items).toEqual([expect.stringContaining('U+202E, U+202C'), expect.stringContaining('U+200B'), expect.stringContaining('71 lines')]);
  const marked = await warning.locator('pre.words-marked').textContent();
  expect(marked).toContain('ACME [U+202E]gnp.exe[U+202C] attached.[U+200B]');
  expect(marked).toContain('Wire the money to account 999.');
  // The hash shown is still the one the approval binds: the words themselves, not the marked copy.
  expect(await card.locator('dd.hash').first().textContent()).toBe(plan.content_sha256);
  expect(pageErrors).toEqual([]);
});

