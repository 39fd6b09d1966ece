import nodemailer from 'nodemailer';
import { sign, pathOf, SIGNATURE_HEADER } from '../common/isphere/signature';
import type { NotifyConfig } from './config';

/** Something waiting for a person. `path` is the console page that shows it (after `#`). */
export interface Notice {
  /** The same for every try of one notice: receivers drop repeats by it. */
  id: string;
  kind: 'question' | 'root_review' | 'root_termination' | 'escalation' | 'approval' | 'stopped';
  run_id: string;
  title: string;
  text: string;
  path: string;
}

const TIMEOUT_MS = 10_000;

/** Sends the notice to one sink; throws if it did not take it. */
export async function sendTo(sink: 'webhook' | 'slack' | 'email', config: NotifyConfig, notice: Notice, consoleUrl: string): Promise<void> {
  const link = `${consoleUrl}#${notice.path}`;
  if (sink === 'webhook') {
    const { url, secret } = config.webhook!;
    const body = JSON.stringify({ ...notice, link });
    await post(url, body, { [SIGNATURE_HEADER]: sign(secret, { method: 'POST', path: pathOf(url), body }), 'x-dipper-delivery': notice.id });
  } else if (sink === 'slack') {
    // Slack's incoming webhooks take `text` (mrkdwn); the link is written as Slack writes one.
    await post(config.slack!.url, JSON.stringify({ text: `*${escapeSlack(notice.title)}*\n${escapeSlack(notice.text)}\n<${link}|Open in the Dipper console>` }), {});
  } else {
    const { smtp, from, to } = config.email!;
    const server = new URL(smtp);
    const transport = nodemailer.createTransport({
      host: server.hostname,
      port: Number(server.port) || (server.protocol === 'smtps:' ? 465 : 587),
      secure: server.protocol === 'smtps:',
      ...(server.username ? { auth: { user: decodeURIComponent(server.username), pass: decodeURIComponent(server.password) } } : {}),
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: TIMEOUT_MS,
    });
    try {
      await transport.sendMail({ from, to, subject: `[Dipper] ${notice.title}`, text: `${notice.text}\n\nOpen it in the Dipper console: ${link}\n`, messageId: `<${notice.id}@dipper>` });
    } finally {
      transport.close();
    }
  }
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  // The receiver's words are not passed on: only that it did not take it.
  if (!res.ok) throw new Error(`the receiver answered ${res.status}`);
}

/** Slack reads &, < and > as markup. */
function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
