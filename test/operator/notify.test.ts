import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { SIGNATURE_HEADER, verify } from '../../src/common/isphere/signature';
import { budgetSpentSignal } from '../../workflows/agent/messages';
import { agentWorkflowId } from '../../workflows/ids';
import { AgentClient, eventually } from '../support/clients';
import { projectRoot } from '../support/processes';
import { startStack, type Stack } from '../support/stack';
import { temporalForFile } from '../support/temporal';
import { launchChromium } from '../console/browser';

/**
 * People told that something waits for them, through every kind of sink
 * (DIPPER_NOTIFY), each a real local receiver: a webhook that checks
 * Dipper's signature, a Slack-shaped incoming webhook, an SMTP server.
 */
const SECRET = 'notify-secret-0123456789';

interface Received {
  webhook: Array<{ body: any; signed: boolean; delivery: string | undefined }>;
  slack: Array<{ text: string }>;
  mail: string[];
}
const got: Received = { webhook: [], slack: [], mail: [] };

function receiver(onBody: (req: http.IncomingMessage, body: string) => void): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      onBody(req, body);
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
const urlOf = (server: { address(): AddressInfo | string | null }, path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;

let webhook: http.Server;
let slack: http.Server;
let smtp: SMTPServer;
let stack: Stack;
let browser: Browser;
const temporal = temporalForFile();
const SHOTS = path.join(projectRoot, 'test-artifacts', 'console');
/** The runtime of the skill `crasher`: it dies at every start, as a broken agent would. */
const crasher = { kind: 'command', command: [process.execPath, '-e', "process.stderr.write('crasher: cannot reach the model\\n'); process.exit(3)"] };

beforeAll(async () => {
  webhook = await receiver((req, body) => {
    const signed = verify(req.headers[SIGNATURE_HEADER] as string, { method: 'POST', path: req.url!, body }, [{ name: 'test', secret: SECRET }]).ok;
    got.webhook.push({ body: JSON.parse(body), signed, delivery: req.headers['x-dipper-delivery'] as string | undefined });
  });
  slack = await receiver((_req, body) => got.slack.push(JSON.parse(body)));
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, done) {
      let mail = '';
      stream.on('data', (c: Buffer) => (mail += c.toString()));
      stream.on('end', () => {
        got.mail.push(mail);
        done();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  browser = await launchChromium();
  stack = await startStack('notify', 28945, {
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'none' }, skills: { crasher } }),
    DIPPER_NOTIFY: JSON.stringify({
      webhook: { url: urlOf(webhook, '/dipper/notices?team=ops'), secret: SECRET },
      slack: { url: urlOf(slack, '/services/T000/B000/XXXX') },
      email: { smtp: `smtp://127.0.0.1:${smtpPort}`, from: 'dipper@example.test', to: ['ops@example.test'] },
    }),
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await new Promise((r) => smtp?.close(() => r(undefined)));
  webhook?.close();
  slack?.close();
});

/** The notice with this id from each receiver, once all three have it. */
async function everywhere(pred: (notice: any) => boolean): Promise<{ hook: any; slack: { text: string }; mail: string }> {
  return eventually(async () => {
    const hook = got.webhook.find((w) => pred(w.body));
    if (!hook) return undefined;
    const s = got.slack.find((m) => m.text.includes(hook.body.link));
    const mail = got.mail.find((m) => m.includes(`<${hook.body.id}@dipper>`));
    return s && mail ? { hook, slack: s, mail } : undefined;
  }, 30_000, 200);
}

describe('notifications', () => {
  it('tell people of a question, an approval and a stopped agent, signed, each with a link to the console', async () => {
    const run = (await stack.operator.request('POST', '/runs', { task: 'Tell people.' })).json;
    const root = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token);
    const isphere = await AgentClient.connect(stack.gatewayUrl, run.root.agent_token, 'isphere');
    try {
      // The root's question goes to a person at once.
      const asked = root.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Which port?', header: 'Port', multiSelect: false, options: [] }] } }, undefined, { timeout: 60_000 });
      const question = await everywhere((n) => n.kind === 'question' && n.run_id === run.run_id);
      expect(question.hook.signed).toBe(true);
      expect(question.hook.delivery).toBe(question.hook.body.id);
      expect(question.hook.body).toMatchObject({ title: expect.stringContaining('Which port?'), link: `${stack.gatewayUrl}/console#/inbox` });
      expect(question.slack.text).toContain(`<${stack.gatewayUrl}/console#/inbox|Open in the Dipper console>`);
      expect(question.mail).toContain('Subject: [Dipper] A question from');
      expect(question.mail).toContain('To: ops@example.test');
      const qid = (await stack.operator.request('GET', `/questions?run=${run.run_id}`)).json.questions[0].qid;
      await stack.operator.request('POST', `/runs/${run.run_id}/questions/${qid}/answer`, { answers: [{ selected_labels: [], text: '8080' }] });
      await asked;

      // An iSphere send waits for a person's approval.
      const planned = await isphere.ok('isphere_send_message', { target_type: 'contact', target_id: 'c_0003', content_text: 'Hello from the team.' });
      const approvalId = planned.approval.approval_id as string;
      const approval = await everywhere((n) => n.kind === 'approval' && n.id.endsWith(approvalId));
      expect(approval.hook.body).toMatchObject({ run_id: run.run_id, link: `${stack.gatewayUrl}/console#/approvals` });
      expect(approval.hook.body.title).toContain('isphere_send_message');
      // The approval's id alone addresses it, as the notice names it: no run id needed.
      const byId = await eventually(async () => {
        const res = await stack.operator.request('GET', `/isphere/approvals/${approvalId}`);
        return res.status === 200 ? res.json : undefined;
      }, 15_000, 250);
      expect(byId).toMatchObject({ approval_id: approvalId, status: 'pending' });
      const rejected = await stack.operator.request('POST', `/isphere/approvals/${approvalId}/reject`, { reason: 'Not this one.' });
      expect(rejected.status).toBe(200);
      expect((await stack.operator.request('GET', `/isphere/approvals/${approvalId}`)).json.status).toBe('rejected');
      expect((await stack.operator.request('POST', '/isphere/approvals/apr_nosuchapproval/approve', {})).status).toBe(404);

      // A member stopped by its budget: its leader is told, and so are people, with the run's page.
      await root.ok('declare_plan', { tasks: [{ id: 'w', role: 'writer', skill: 'worker', task: 'Write.' }] });
      const member = await root.ok('spawn_agent', { task_id: 'w' });
      await temporal.client.workflow.getHandle(agentWorkflowId(run.run_id, member.agent_id)).signal(budgetSpentSignal, { budget: 'agent', measure: 'tokens', used: 12, limit: 10 });
      const stopped = await everywhere((n) => n.kind === 'stopped' && n.run_id === run.run_id);
      expect(stopped.hook.body.title).toContain("spent its skill's token budget (12 used of 10)");
      expect(stopped.hook.body.link).toBe(`${stack.gatewayUrl}/console#/runs/${run.run_id}`);
      // Each was sent once to each receiver, and recorded.
      await eventually(async () => ((await stack.operator.events(run.run_id, 'notification.sent')).length === 3 ? true : undefined), 30_000, 250);
      const sent = await stack.operator.events(run.run_id, 'notification.sent');
      expect(sent.map((e) => e.data.sinks)).toEqual([['webhook', 'slack', 'email'], ['webhook', 'slack', 'email'], ['webhook', 'slack', 'email']]);
      expect(got.webhook.filter((w) => w.body.run_id === run.run_id)).toHaveLength(3);
    } finally {
      await root.close();
      await isphere.close();
      await stack.operator.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
    }
  }, 120_000);
  it('names a stalled team, a root crashed three times and a run waiting for you in the console, and tells people of each', async () => {
    const op = stack.operator;
    const start = async (body: Record<string, unknown>) => (await op.request('POST', '/runs', body)).json as { run_id: string; root: { agent_id: string; agent_token: string } };
    // A lead whose worker hands in and who never reviews it; a root whose runtime dies at every start; a root that asks the person.
    const [stalled, crashed, asking] = await Promise.all([
      start({ task: 'Lead a team, then go quiet.', limits: { review_watchdog_seconds: 1, idle_watchdog_seconds: 0 } }),
      start({ task: 'Crash.', root_skill: 'crasher' }),
      start({ task: 'Ask the person.' }),
    ]);
    const lead = await AgentClient.connect(stack.gatewayUrl, stalled.root.agent_token);
    const asker = await AgentClient.connect(stack.gatewayUrl, asking.root.agent_token);
    let worker: AgentClient | undefined;
    const asked = asker.mcp.callTool({ name: 'ask_user', arguments: { questions: [{ question: 'Which region?', header: 'Region', multiSelect: false, options: [] }] } }, undefined, { timeout: 90_000 }).catch(() => undefined);
    const page: Page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.setDefaultTimeout(20_000);
    try {
      await lead.ok('declare_plan', { tasks: [{ id: 'w', role: 'writer', skill: 'worker', task: 'Write.' }, { id: 'x', role: 'editor', skill: 'worker', task: 'Edit.', depends_on: ['w'] }] });
      const member = await lead.ok('spawn_agent', { task_id: 'w' });
      worker = await AgentClient.connect(stack.gatewayUrl, (await op.launch(stalled.run_id, member.agent_id)).token);
      await worker.ok('signal_review', { detail: '[REVIEW REQUIRED] The draft is in artifacts/w.' });

      // People are told of each, by every receiver, with a link to where it waits.
      const [escalation, stopped, question] = await Promise.all([
        everywhere((n) => n.kind === 'escalation' && n.run_id === stalled.run_id),
        everywhere((n) => n.kind === 'stopped' && n.run_id === crashed.run_id),
        everywhere((n) => n.kind === 'question' && n.run_id === asking.run_id),
      ]);
      expect(escalation.hook.body.title).toMatch(new RegExp(`^The watchdog: writer-\\S+ \\(${member.agent_id}\\) has waited \\d+ s for root-`));
      expect(escalation.hook.body.link).toBe(`${stack.gatewayUrl}/console#/inbox`);
      expect(stopped.hook.body.title).toContain('crashed 3 times and was not restarted');
      expect(stopped.hook.body.text).toContain('crasher: cannot reach the model');
      expect(question.hook.body.title).toContain('Which region?');
      for (const n of [escalation, stopped, question]) {
        expect(n.hook.signed).toBe(true);
        expect(n.slack.text).toContain(n.hook.body.link);
        expect(unfold(n.mail)).toContain(n.hook.body.link);
      }
      const crashes = await op.events(crashed.run_id, 'agent_crashed');
      expect(crashes.map((e) => e.data.crashes)).toEqual([1, 2, 3]);

      // The console names each: on the runs list, worst first, and on its page.
      await page.addInitScript((token) => (globalThis as any).sessionStorage.setItem('dipper.operatorToken', token), stack.env.DIPPER_OPERATOR_TOKEN);
      await page.goto(`${stack.gatewayUrl}/console#/runs`);
      await page.locator('#run-sort').selectOption('health');
      const badgeOf = (id: string) => page.locator(`tr[data-run-id="${id}"] .health-cell .badge`);
      await badgeOf(stalled.run_id).filter({ hasText: 'needs attention' }).waitFor();
      await badgeOf(crashed.run_id).filter({ hasText: 'needs attention' }).waitFor();
      await badgeOf(asking.run_id).filter({ hasText: 'needs you' }).waitFor();
      const order = await page.locator('table.runs tbody tr .health-cell .badge').allTextContents();
      const rank = ['needs attention', 'needs you', 'working'];
      expect(order).toEqual([...order].sort((x, y) => rank.indexOf(x) - rank.indexOf(y)));
      await shot(page, '10-runs-worst-first');

      const chip = (run: string, agent: string) => page.locator(`li[data-agent-id="${agent}"] > .agent .health`);
      await page.goto(`${stack.gatewayUrl}/console#/runs/${stalled.run_id}`);
      await chip(stalled.run_id, stalled.root.agent_id).filter({ hasText: 'stalled: needs attention' }).waitFor();
      await chip(stalled.run_id, member.agent_id).filter({ hasText: "waits for its leader's review" }).waitFor();
      // Whom each waits on, as links to their lines; the plan task nobody has started; the run's health in its summary.
      expect(await page.locator(`li[data-agent-id="${stalled.root.agent_id}"] > .agent .waits-on`).getAttribute('data-target')).toBe(member.agent_id);
      expect(await page.locator(`li[data-agent-id="${member.agent_id}"] > .agent .waits-on`).getAttribute('data-target')).toBe(stalled.root.agent_id);
      expect(await page.locator('li[data-plan-task="x"]').textContent()).toContain('not started · waits for w');
      expect(await page.locator('li[data-plan-task="w"]').count()).toBe(0);
      expect(await page.locator('.run-summary dd', { hasText: 'needs attention' }).textContent()).toContain('root-');
      await shot(page, '11-stalled-team');
      await page.goto(`${stack.gatewayUrl}/console#/runs/${crashed.run_id}`);
      await chip(crashed.run_id, crashed.root.agent_id).filter({ hasText: 'crashed out: needs attention' }).waitFor();
      // Its events say what happened in words, in the order it happened.
      await page.locator('table.events td', { hasText: 'crash 3: exit code 3; last stderr line: crasher: cannot reach the model' }).waitFor();
      const said = await page.locator('table.events tbody tr td:nth-child(4)').allTextContents();
      expect(said.indexOf('stopped: crash escalated')).toBeLessThan(said.indexOf('crash 3: exit code 3; last stderr line: crasher: cannot reach the model'));
      await shot(page, '12-crashed-root');
      await page.goto(`${stack.gatewayUrl}/console#/runs/${asking.run_id}`);
      await chip(asking.run_id, asking.root.agent_id).filter({ hasText: /^waits for an answer \(q_/ }).waitFor();
      await page.goto(`${stack.gatewayUrl}/console#/inbox`);
      await page.locator('article.question', { hasText: 'Which region?' }).waitFor();
      await shot(page, '13-waiting-for-you');
      expect(pageErrors).toEqual([]);
    } finally {
      for (const run of [stalled, crashed, asking]) await op.request('POST', `/runs/${run.run_id}/cancel`, { reason: 'test over' });
      await asked;
      await page.close();
      for (const c of [lead, asker, worker]) await c?.close();
    }
  }, 120_000);
});

/** A screenshot for CI to keep: an artifact, never an assertion. */
async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), animations: 'disabled', timeout: 10_000 }).catch((err: Error) => process.stderr.write(`notify test: no screenshot ${name} (${err.message.split('\n')[0]})\n`));
}

/** A mail body as written, its quoted-printable lines joined and escapes read. */
function unfold(mail: string): string {
  return mail.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
