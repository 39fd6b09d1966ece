import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { jsonSetting } from '../common/jsonSetting';

/**
 * Where Dipper tells people that something waits for them (DIPPER_NOTIFY):
 * a signed generic webhook, a Slack incoming webhook, email over SMTP. Any
 * of them, or none.
 */
const schema = z.strictObject({
  webhook: z.strictObject({ url: z.url(), secret: z.string().min(16).optional(), secret_file: z.string().min(1).optional() }).optional(),
  slack: z.strictObject({ url: z.url() }).optional(),
  email: z.strictObject({ smtp: z.string().regex(/^smtps?:\/\//, 'an smtp:// or smtps:// URL'), from: z.string().min(3), to: z.array(z.string().min(3)).min(1) }).optional(),
});

export interface NotifyConfig {
  webhook?: { url: string; secret: string };
  slack?: { url: string };
  email?: { smtp: string; from: string; to: string[] };
}

export function parseNotify(raw: string | undefined): NotifyConfig {
  if (!raw) return {};
  const { webhook, slack, email } = jsonSetting('DIPPER_NOTIFY', raw, schema, '{"webhook": {"url", "secret"}, "slack": {"url"}, "email": {"smtp", "from", "to": [...]}}');
  const config: NotifyConfig = {};
  if (webhook) {
    const secret = webhook.secret ?? (webhook.secret_file ? readFileSync(webhook.secret_file, 'utf8').trim() : undefined);
    // Receivers must be able to tell Dipper's notices from anyone's: unsigned ones are not sent.
    if (!secret || secret.length < 16) throw new Error('DIPPER_NOTIFY webhook: a secret (or secret_file) of at least 16 characters is required');
    config.webhook = { url: webhook.url, secret };
  }
  if (slack) config.slack = slack;
  if (email) config.email = email;
  return config;
}

/** The configured sinks by name, in a fixed order. */
export function sinksOf(config: NotifyConfig): Array<'webhook' | 'slack' | 'email'> {
  return (['webhook', 'slack', 'email'] as const).filter((s) => config[s] !== undefined);
}
