import pino from 'pino';
import type { DipperConfig } from './config';

/**
 * One structured logger per process. Authorization headers and tokens are
 * redacted wherever they appear in a logged object.
 */
export function createLogger(config: Pick<DipperConfig, 'logLevel'>, name: string) {
  return pino({
    name,
    level: config.logLevel,
    redact: { paths: ['token', '*.token', 'headers.authorization', '*.headers.authorization', 'authorization'], censor: '[redacted]' },
  });
}

export type Logger = ReturnType<typeof createLogger>;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TOKEN = /\b(dpa|dpo)_[A-Za-z0-9_.-]+/g;

/**
 * The text of an error, fit for a log line: Temporal's internal run ids and
 * anything shaped like a Dipper token are masked, and the stack is dropped.
 */
export function safeMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';
  return text.replace(UUID, '<id>').replace(TOKEN, '$1_[redacted]').slice(0, 500);
}
