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
