import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { agentWorkflowId, questionWorkflowId, runWorkflowId } from '../../workflows/ids';
import type { AgentClient } from '../support/clients';
import { projectRoot } from '../support/processes';
import { approve, closeAll, env, eventsOf, operator, spawn, startRun, task, waitForInbox, type Member } from '../support/team';
import { ana, launchChromium, startConsoleGateway, TEMPORAL_UI, until } from './browser';
import { answerRuleCases } from './answerRules';
import { startScriptedModel, type ScriptedModel } from '../../src/model/scripted/server';
import { budgetSpentSignal } from '../../workflows/agent/messages';
import { temporalForFile } from '../support/temporal';
import { paths } from '../../src/paths';

/**
 * The operator console in a real headless Chromium against the real
 * stack: sign in, a question climbing a three-level chain to a person who
 * answers it in the page, and the run's tree with its Temporal UI links.
 */
const SHOTS = path.join(projectRoot, 'test-artifacts', 'console');
const PWN = '<img src=x onerror="window.__pwned=1">';
const SCRIPT = '<script>window.__pwned=1</script>';

const database = {
  question: `Which database? ${PWN}`,
  header: 'Database',
  multiSelect: false,
  options: [
    { label: 'PostgreSQL', description: 'Shared, several hosts', value: 'pg' },
    { label: 'SQLite', description: `One file ${SCRIPT}` },
  ],
};
const scope = {
  question: 'Which features ship first?',
  header: 'Scope',
  multiSelect: true,
  options: [
    { label: 'Search', description: '' },
    { label: 'Export', description: PWN },
    { label: 'Other', description: 'Say which', requires_text: true },
  ],
};
const notes = { question: 'Anything else the team should know?', header: 'Notes', multiSelect: false, options: [] };
const context = `${SCRIPT} We ship on Friday. ${PWN}`;

let gateway: { url: string; stop: () => Promise<void> };
let model: ScriptedModel;
let browser: Browser;
const temporal = temporalForFile();
let page: Page;
const cspViolations: string[] = [];
const pageErrors: string[] = [];
/** The page's API requests (method, path, status, milliseconds), to say what happened when a wait runs out. */
const requests: string[] = [];

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  model = await startScriptedModel({});
  // Told its agents run on the claude runtime (the model proxy serves no other), while the shared worker runs none: the test plays their CLI.
  const modelEnv = { DIPPER_MODEL_UPSTREAM_URL: model.url, DIPPER_MODEL_API_KEY: 'sk-console-test', DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'claude' } }) };
  [gateway, browser] = await Promise.all([startConsoleGateway(modelEnv), launchChromium()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // A wait that fails says so well inside jest's minute.
  page.setDefaultTimeout(15_000);
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) cspViolations.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
  const started = new Map<object, number>();
  page.on('request', (r) => started.set(r, Date.now()));
  const log = (r: { method(): string; url(): string }, what: string) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/api/')) requests.push(`${new Date().toISOString().slice(11, 23)} ${r.method()} ${path} ${what} ${Date.now() - (started.get(r) ?? Date.now())} ms`);
  };
  // A request may finish as its page closes: its response is then gone, and only the log line is lost.
  page.on('requestfinished', async (r) => log(r, String((await r.response().catch(() => null))?.status() ?? '?')));
  page.on('requestfailed', (r) => log(r, `failed (${r.failure()?.errorText ?? '?'})`));
});

afterAll(async () => {
  await closeAll();
  await browser?.close();
  await gateway?.stop();
  await model?.close();
});

/**
 * A screenshot of the window for CI to keep. They are artifacts, not
 * assertions: a shot that fails is reported, never a failed test.
 *
 * Never the full page: shooting a page taller than the window resizes the
 * window and back, and left the page laid out for the tall window until
 * the next change. The next click's mousedown then met the Submit button,
 * the textarea's blur shrank the page by 183 px, and the mouseup met the
 * textarea: the form got the click, and no answer went out. It happened
 * only when other tests had left questions in the inbox (a page taller
 * than the window), so only in full runs.
 */
async function shot(name: string): Promise<void> {
  try {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled', timeout: 10_000 });
  } catch (err) {
    process.stderr.write(`console test: no screenshot ${name} (${err instanceof Error ? err.message.split('\n')[0] : String(err)})\n`);
  }
}
// The test compiles without the DOM's types; these run in the page, where the globals are.
const pwned = () => page.evaluate(() => (globalThis as any).__pwned);
const stored = () => page.evaluate(() => (globalThis as any).sessionStorage.getItem('dipper.operatorToken') as string | null);
const cookie = () => page.evaluate(() => (globalThis as any).document.cookie as string);

/** ask_user as a runtime sends it, through the official MCP client. */
function ask(client: AgentClient, args: Record<string, unknown>) {
  return client.mcp.callTool({ name: 'ask_user', arguments: args }, undefined, { timeout: 60_000 }) as Promise<{
    isError?: boolean;
    structuredContent?: any;
    content: { text: string }[];
  }>;
}

const qidIn = (item: { content: string }) => /qid: (q_[A-Za-z0-9_-]+)/.exec(item.content)?.[1];

describe('the operator console', () => {
  it('is served with a strict CSP, and the API refuses a foreign origin', async () => {
    for (const at of ['/console', '/console/']) {
      const res = await fetch(`${gateway.url}${at}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      );
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const script = await fetch(`${gateway.url}/console/app.js`);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(script.headers.get('content-security-policy')).toContain("script-src 'self'");

    const as = (headers: Record<string, string>) => fetch(`${gateway.url}/api/console`, { headers });
    const foreign = await as({ Authorization: `Bearer ${ana.token}`, Origin: 'https://elsewhere.example' });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as any).error.code).toBe('forbidden_origin');
    expect((await as({})).status).toBe(401);
    expect(await (await as({ Authorization: `Bearer ${ana.token}` })).json()).toEqual({
      operator: { name: 'Ana', role: 'approver' },
      namespace: 'dipper',
      temporal_ui_url: TEMPORAL_UI,
    });
  });

  it('refuses a wrong token in the page, signs in with a right one and signs out', async () => {
    await page.goto(`${gateway.url}/console`);
    await page.locator('#login-form').waitFor();
    await shot('01-page-load');

    await page.fill('#token', 'dpo_not_a_token_anyone_has_0000');
    await page.click('#login-form button[type=submit]');
    const message = page.locator('#login-message');
    await message.filter({ hasText: 'That token was refused' }).waitFor();
    expect(await stored()).toBeNull();

    await page.fill('#token', ana.token);
    await page.click('#login-form button[type=submit]');
    await page.locator('#who-name', { hasText: 'Ana (approver)' }).waitFor();
    expect(await stored()).toBe(ana.token);
    // The token never becomes a cookie: nothing another site makes the browser send can authenticate.
    expect(await cookie()).toBe('');
    expect((await page.context().cookies()).length).toBe(0);

    await page.click('#logout');
    await message.filter({ hasText: 'Signed out' }).waitFor();
    expect(await stored()).toBeNull();
    await page.fill('#token', ana.token);
    await page.click('#login-form button[type=submit]');
    await page.locator('#who-name', { hasText: 'Ana' }).waitFor();
  });

  let chain: { runId: string; rootId: string; root: AgentClient; a: Member; b: Member; qid: string };

  it('shows a question escalated up a three-level chain, and the answer given in the page reaches the asker', async () => {
    const { runId, rootId, root } = await startRun(undefined, 'Build the search page.');
    await root.ok('declare_plan', { tasks: [task('a')] });
    const a = await spawn(root, runId, 'a');
    await a.client.ok('declare_plan', { tasks: [task('b')] });
    const b = await spawn(a.client, runId, 'b');

    // The inbox is open before the question arrives: it must show up by the page's own refresh.
    await page.goto(`${gateway.url}/console#/inbox`);
    await page.locator('h2', { hasText: 'Questions waiting for a person' }).waitFor();
    const asked = ask(b.client, { questions: [database, scope, notes], context });
    const qid = qidIn(await waitForInbox(a.client, (m) => m.kind === 'system' && m.content.startsWith('[INBOX QUESTION]')))!;
    await a.client.ok('escalate_question', { qid, reason: 'The root decides this.' });
    await waitForInbox(root, (m) => m.kind === 'system' && m.content.includes(qid));
    await root.ok('escalate_question', { qid, reason: 'The user decides.' });
    chain = { runId, rootId, root, a, b, qid };

    const card = page.locator(`article[data-qid="${qid}"]`);
    await card.waitFor();
    await shot('02-inbox');

    // Each sub-question has the widget its kind asks for.
    const sub = (i: number) => card.locator(`fieldset[data-index="${i}"]`);
    expect(await Promise.all([0, 1, 2].map((i) => sub(i).getAttribute('data-kind')))).toEqual(['single', 'multi', 'text']);
    expect(await sub(0).locator('input[type=radio]').count()).toBe(3); // two options and "Other"
    expect(await sub(0).locator('input[type=checkbox]').count()).toBe(0);
    expect(await sub(1).locator('input[type=checkbox]').count()).toBe(3);
    expect(await sub(1).locator('input[type=radio]').count()).toBe(0);
    expect(await sub(2).locator('input').count()).toBe(0);
    expect(await sub(2).locator('textarea').isVisible()).toBe(true);
    expect(await sub(0).locator('textarea').isVisible()).toBe(false);
    expect(await sub(1).locator('textarea').isVisible()).toBe(false);
    expect(await Promise.all([0, 1, 2].map((i) => sub(i).locator('.chip').textContent()))).toEqual(['Database', 'Scope', 'Notes']);

    // What the model wrote is shown as text: no element came of it, and nothing ran.
    expect(await sub(0).locator('.question-text').textContent()).toBe(database.question);
    expect(await card.locator('.context').textContent()).toBe(context);
    expect(await sub(1).locator('.choice').nth(1).locator('.option-description').textContent()).toBe(PWN);
    expect(await card.locator('img, script, b').count()).toBe(0);
    expect(await pwned()).toBeUndefined();

    // Submit waits until every sub-question's answer would be taken.
    const submit = card.locator('button[type=submit]');
    expect(await submit.isDisabled()).toBe(true);
    await sub(0).locator('input[value=other]').check();
    expect(await sub(0).locator('textarea').isVisible()).toBe(true);
    await sub(0).locator('textarea').fill('DuckDB, embedded');
    await sub(1).locator('input[value="0"]').check();
    await sub(2).locator('textarea').fill('Ship it on Friday.');
    expect(await submit.isDisabled()).toBe(false);
    // Choosing an option that asks for text holds Submit back until the text is there.
    await sub(1).locator('input[value="2"]').check();
    expect(await sub(1).locator('textarea').isVisible()).toBe(true);
    expect(await submit.isDisabled()).toBe(true);
    await sub(1).locator('textarea').fill('Tags');
    expect(await submit.isDisabled()).toBe(false);
    await shot('03-filled');

    const from = requests.length;
    // Where clicks land, in case the answer never goes out (a card that moved under the pointer, say).
    await page.evaluate(`window.clicks = ['scrollY ' + window.scrollY + ' innerHeight ' + window.innerHeight]; for (const t of ['mousedown', 'mouseup', 'click', 'scroll', 'resize', 'change', 'focusout']) document.addEventListener(t, (e) => window.clicks.push(t + ' ' + (e.target.outerHTML ? e.target.outerHTML.slice(0, 60) : String(e.target)) + ' at ' + e.clientX + ',' + e.clientY + ' scrollY ' + window.scrollY), true)`);
    const box = await submit.boundingBox();
    await submit.click();
    const outcome = page.locator(`.outcome[data-qid="${qid}"]`);
    await outcome.waitFor({ timeout: 20_000 }).catch(async (err: Error) => {
      // What the page did meanwhile: the answer's POST, the record's read, the inbox's refreshes, and any error it shows.
      const shown = (await card.locator('.error').textContent({ timeout: 1000 }).catch(() => null)) ?? '(card gone)';
      const clicks = (await page.evaluate('window.clicks')) as string[];
      const cards = await page.locator('article.question').count();
      throw new Error(`${err.message}\ncard error: ${shown}\nsubmit was at ${JSON.stringify(box)}; ${cards} cards shown\nclicks: ${clicks.join(' | ')}\nrequests:\n${requests.slice(from).join('\n')}`);
    });
    await card.waitFor({ state: 'detached' });
    expect(await outcome.textContent()).toContain('as Ana');
    await shot('04-answered');

    const res = await asked;
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toEqual({
      answers: [
        { selected_labels: [], selected_values: [], text: 'DuckDB, embedded' },
        { selected_labels: ['Search', 'Other'], selected_values: ['Search', 'Other'], text: 'Tags' },
        { selected_labels: [], selected_values: [], text: 'Ship it on Friday.' },
      ],
      answer_text: 'Database: DuckDB, embedded\nScope: Search, Other: Tags\nNotes: Ship it on Friday.',
    });
    expect(await outcome.locator('pre').textContent()).toBe(res.structuredContent.answer_text);
    // ask_user's result carries the answers only; the question records who gave them.
    const record = await operator.request('GET', `/runs/${runId}/questions/${qid}`);
    expect(record.json).toMatchObject({ status: 'answered', answered_by: { operator: 'Ana', reason: null } });
    expect((await eventsOf(runId, 'question_answered'))[0].data).toMatchObject({ qid, by: 'operator Ana', hops: 3 });
    expect(await pwned()).toBeUndefined();
  });

  it('lists the run, and shows its agents as a tree with links to the Temporal UI', async () => {
    const { runId, rootId, a, b, qid } = chain;
    const ui = (workflowId: string) => `${TEMPORAL_UI}/namespaces/dipper/workflows/${encodeURIComponent(workflowId)}`;
    await page.goto(`${gateway.url}/console#/runs`);
    const row = page.locator(`tr[data-run-id="${runId}"]`);
    await row.waitFor();
    expect(await row.locator('a.temporal').getAttribute('href')).toBe(ui(runWorkflowId(runId)));

    await row.locator(`a[href="#/runs/${runId}"]`).click();
    const agent = (id: string) => `li[data-agent-id="${id}"]`;
    await page.locator(`${agent(rootId)} > ul > ${agent(a.agentId)} > ul > ${agent(b.agentId)}`).waitFor();
    for (const id of [rootId, a.agentId, b.agentId]) {
      const link = page.locator(`${agent(id)} > .agent a.temporal`);
      expect(await link.getAttribute('href')).toBe(ui(agentWorkflowId(runId, id)));
    }
    expect(await page.locator(`${agent(b.agentId)} > .agent .agent-role`).textContent()).toBe('b-engineer');
    expect(await page.locator(`${agent(rootId)} > .agent .badge`).textContent()).toBe('active');
    // What each waits on, from its workflow's own account: the leaders on the agent they lead, the leaf at work.
    for (const id of [rootId, a.agentId]) expect(await page.locator(`${agent(id)} > .agent .health`).textContent()).toBe('waits on 1 agent(s)');
    expect(await page.locator(`${agent(b.agentId)} > .agent .health`).textContent()).toMatch(/^working · since \d+ (s|min) ago$/);
    // Each agent's inbox depth, as the operator API counts it (A and the root still hold the question's inbox line).
    const rows = (await operator.request('GET', `/runs/${runId}/agents`)).json.agents;
    for (const id of [rootId, a.agentId]) {
      const depth = rows.find((r: any) => r.agent_id === id).inbox_depth;
      expect(depth).toBeGreaterThan(0);
      expect(await page.locator(`${agent(id)} > .agent .inbox-depth`).textContent()).toBe(`inbox ${depth}`);
    }
    expect(await page.locator('h2 a.temporal').getAttribute('href')).toBe(ui(runWorkflowId(runId)));
    expect(await page.locator('.run-summary dd').allTextContents()).toEqual(expect.arrayContaining(['active', 'Build the search page.', rootId, '3']));

    const question = page.locator(`.run-questions li[data-qid="${qid}"]`);
    await question.locator('.badge', { hasText: 'answered' }).waitFor();
    expect(await question.locator('a.temporal').getAttribute('href')).toBe(ui(questionWorkflowId(runId, qid)));
    await page.locator('table.events td', { hasText: 'question_answered' }).first().waitFor();
    await shot('05-run-tree');
  });

  it('declines a question with a reason, which the asker receives', async () => {
    const { runId, root } = chain;
    const asked = ask(root, { questions: [notes] });
    const waiting = await until(async () => {
      const list = (await operator.request('GET', `/questions?run=${runId}`)).json.questions;
      return list.find((q: any) => q.asker_id === chain.rootId);
    }, "the root's question waiting for a person");
    await page.goto(`${gateway.url}/console#/inbox`);
    const card = page.locator(`article[data-qid="${waiting.qid}"]`);
    await card.locator('button', { hasText: 'Decline…' }).click();
    const send = card.locator('button', { hasText: 'Decline question' });
    expect(await send.isDisabled()).toBe(true);
    await card.locator('.decline-reason').fill('Not for this run.');
    await send.click();
    await page.locator(`.outcome[data-qid="${waiting.qid}"]`, { hasText: 'Not for this run.' }).waitFor();
    const res = await asked;
    expect(res.isError).toBe(true);
    expect(JSON.parse(res.content[0].text).error).toMatchObject({ code: 'user_declined', reason: 'Not for this run.' });
  });

  it("takes the root's review of the largest size, one unbroken word, without widening the page, and approves it", async () => {
    const { runId, rootId, root } = await startRun(undefined, 'Report at length.');
    const report = `[REVIEW REQUIRED] ${'x'.repeat(200_000)}`;
    await root.ok('signal_review', { detail: report });
    const waiting = await until(async () => {
      const list = (await operator.request('GET', `/questions?run=${runId}`)).json.questions;
      return list.find((q: any) => q.system?.kind === 'root_review');
    }, "the root's review waiting for a person");
    await page.goto(`${gateway.url}/console#/inbox`);
    const card = page.locator(`article[data-qid="${waiting.qid}"]`);
    await card.waitFor();
    // Shown in part, wrapped: the page is no wider than its window (a 200,000-character word once made it 2.3 million pixels).
    expect(((await card.locator('.context').textContent()) ?? '').length).toBeLessThan(5000);
    const width = () => page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number);
    expect(await width()).toBeLessThanOrEqual(1280);
    await card.locator('button', { hasText: 'Show all 200,018 characters' }).click();
    expect(await card.locator('.context').textContent()).toBe(report);
    expect(await width()).toBeLessThanOrEqual(1280);
    // Approve or Rework, nothing else: no "Other", and Rework asks for words.
    expect(await card.locator('input[type=radio]').count()).toBe(2);
    await card.locator('label', { hasText: 'Approve' }).click();
    await card.locator('button[type=submit]').click();
    await page.locator(`.outcome[data-qid="${waiting.qid}"]`).waitFor();
    await until(async () => (await operator.request('GET', `/runs/${runId}`)).json.pending_root.length === 0, 'the review approved');
    const [approved] = await eventsOf(runId, 'completion.approved');
    expect(approved).toMatchObject({ agent_id: rootId, data: { kind: 'review', operator: 'Ana' } });
  });

  it("shows a root's report with its files, its plan and what happened since, its review and end-of-run request as one card", async () => {
    const { runId, root } = await startRun(undefined, 'Report with context.');
    await root.ok('declare_plan', { tasks: [task('a')] });
    const a = await spawn(root, runId, 'a');
    await approve(root, a);
    // The files, as the team left them: a text file the report names, a binary one, the plan task's artifacts.
    const workspace = paths.runWorkspace(env.dataDir, runId);
    fs.mkdirSync(path.join(workspace, 'notes'), { recursive: true });
    fs.mkdirSync(path.join(workspace, 'artifacts', 'a'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'notes', 'summary.txt'), `Search ships on Friday.\n${PWN}\n`);
    fs.writeFileSync(path.join(workspace, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    fs.writeFileSync(path.join(workspace, 'artifacts', 'a', 'result.md'), '# Result\nAll tests pass.\n');
    await root.ok('signal_review', { detail: '[REVIEW REQUIRED] Done: see notes/summary.txt, logo.png and ../../../../etc/passwd.' });
    await root.ok('request_termination', { detail: 'Everything is delivered; end the run.' });
    const asked = await until(async () => {
      const list = (await operator.request('GET', `/questions?run=${runId}`)).json.questions as any[];
      return list.length === 2 ? list : undefined;
    }, 'the review and the request to end the run waiting for a person');
    const review = asked.find((q) => q.system.kind === 'root_review');
    expect(review.artifacts.map((f: any) => f.path)).toEqual(['notes/summary.txt', 'logo.png', 'artifacts/a/result.md']);

    await page.goto(`${gateway.url}/console#/inbox`);
    const card = page.locator(`section.root-decision[data-run-id="${runId}"]`);
    await card.waitFor();
    // The inbox leaves out a question whose record did not answer in time and shows it at its next refresh: on a busy
    // machine the card can come before its second question.
    await card.locator('article.question').nth(1).waitFor();
    // One card, the review first.
    expect(await card.locator('article.question').evaluateAll((els) => els.map((e) => e.getAttribute('data-qid')))).toEqual([review.qid, asked.find((q) => q.system.kind === 'root_termination').qid]);
    const files = card.locator(`article[data-qid="${review.qid}"] .review-files`);
    await files.locator('li[data-path="notes/summary.txt"] summary').click();
    expect(await files.locator('li[data-path="notes/summary.txt"] pre').textContent()).toBe(`Search ships on Friday.\n${PWN}\n`);
    expect(await files.locator('li[data-path="logo.png"]').textContent()).toBe('logo.png · 8 B · not text');
    expect(await files.locator('li[data-path="artifacts/a/result.md"]').textContent()).toContain('artifacts/a/result.md · 25 B');
    expect(await pwned()).toBeUndefined();
    const plan = card.locator(`article[data-qid="${review.qid}"] table.plan tr[data-plan-task="a"]`);
    await plan.waitFor();
    expect(await plan.locator('td').allTextContents()).toEqual(['a', 'a-engineer', 'done', `${a.agentId} (terminated)`]);
    const since = card.locator(`article[data-qid="${review.qid}"] .review-events`);
    await since.locator('h4', { hasText: /^Since the run started: \d+ events$/ }).waitFor();
    expect(await since.textContent()).toContain('handed in its work for review');
    await shot('07-root-report');

    // Approved both: the review is acknowledged and the run ends.
    for (const q of [review, asked.find((x) => x.system.kind === 'root_termination')]) {
      const one = card.locator(`article[data-qid="${q.qid}"]`);
      await one.locator('label', { hasText: 'Approve' }).click();
      await one.locator('button[type=submit]').click();
      await page.locator(`.outcome[data-qid="${q.qid}"]`).waitFor();
    }
    await card.waitFor({ state: 'detached' });
    await until(async () => (await operator.request('GET', `/runs/${runId}`)).json.status === 'completed', 'the run completed');
  });

  it("applies the question workflow's answer rules in the browser, case for case", async () => {
    const cases = answerRuleCases();
    await page.goto(`${gateway.url}/console`);
    // A string, so the module is imported by the page itself (the test's compiler would rewrite an import() in a function).
    const inBrowser = await page.evaluate(
      `import('/console/answers.js').then((rules) => ${JSON.stringify(cases)}.map((c) => rules.answerProblem(c.q, c.a, 0)?.field ?? null))`,
    );
    expect(inBrowser).toEqual(cases.map((c) => c.field));
  });

  it("shows the model's use per agent and for the run, and an agent stopped by its budget as needing attention", async () => {
    const started = (await operator.request('POST', '/runs', { task: 'Spend a little.' })).json;
    const run = { runId: started.run_id as string, root: { agentId: started.root.agent_id as string, token: started.root.agent_token as string } };
    try {
      // Two model requests through the proxy, with the root's own token as the key, as its CLI would make them.
      for (const text of ['Hello.', 'Hello again.']) {
        const res = await fetch(`${gateway.url}/model/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': run.root.token, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify({ model: 'scripted', max_tokens: 100, messages: [{ role: 'user', content: text }] }),
        });
        expect(res.status).toBe(200);
      }
      const usage = (await operator.request('GET', `/runs/${run.runId}`)).json.model_usage;
      expect(usage.total.requests).toBe(2);
      const tokens = usage.total.input_tokens + usage.total.output_tokens;
      expect(tokens).toBeGreaterThan(0);
      await temporal.client.workflow.getHandle(agentWorkflowId(run.runId, run.root.agentId)).signal(budgetSpentSignal, { budget: 'run', measure: 'turns', used: 2, limit: 2 });

      await page.goto(`${gateway.url}/console#/runs/${run.runId}`);
      const root = page.locator(`li[data-agent-id="${run.root.agentId}"] > .agent`);
      await root.locator('.flag-stopped', { hasText: 'budget spent: needs attention' }).waitFor();
      expect(await root.locator('.agent-usage').textContent()).toBe(`${tokens.toLocaleString('en')} tokens · 2 requests`);
      expect(await page.locator('.run-summary dd', { hasText: 'model requests' }).textContent()).toMatch(new RegExp(`^${tokens.toLocaleString('en')} tokens \\(.*\\) in 2 model requests$`));
      await shot('08-stopped-agent');

      // The runs list names the run as needing attention, filtered and worst first; the Runs tab counts it on every page.
      const listed = await until(async () => {
        const rows = (await operator.request('GET', '/runs?status=active&page_size=200')).json.runs as any[];
        const mine = rows.find((r) => r.run_id === run.runId);
        return mine?.health === 'needs_attention' ? mine : undefined;
      }, 'the run listed as needing attention');
      expect(listed.attention.agents).toBe(1);
      const waiting = (await operator.request('GET', '/waiting')).json;
      expect(waiting.agents_needing_attention).toBeGreaterThanOrEqual(1);
      await page.goto(`${gateway.url}/console#/runs`);
      await page.locator('#health-filter').selectOption('needs_attention');
      const row = page.locator(`tr[data-run-id="${run.runId}"]`);
      await row.locator('.badge-needs_attention', { hasText: 'needs attention' }).waitFor();
      expect(new Set(await page.locator('table.runs tbody tr .health-cell .badge').allTextContents())).toEqual(new Set(['needs attention']));
      await page.locator('#runs-count', { hasText: String(waiting.agents_needing_attention) }).waitFor();
      await shot('09-runs-by-health');
      await page.goto(`${gateway.url}/console#/approvals`);
      // Still counted on another page.
      expect(Number(await page.locator('#runs-count').textContent())).toBeGreaterThanOrEqual(1);
    } finally {
      await operator.request('POST', `/runs/${run.runId}/cancel`, { reason: 'test over' });
    }
  });

  it('ran without a script error or a Content-Security-Policy violation', () => {
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
  });
});
