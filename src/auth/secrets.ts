import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { DipperConfig } from '../config';

export interface Secrets {
  operatorToken: string;
  tokenSecret: string;
}

/**
 * The operator token and the signing secret: from the environment when set,
 * otherwise generated once and kept in the data folder (mode 0600) so the
 * gateway, the worker and later restarts agree.
 */
export function loadOrCreateSecrets(config: DipperConfig): Secrets {
  const stored = config.operatorToken && config.tokenSecret ? null : readOrCreate(path.join(config.dataDir, 'secrets.json'));
  return {
    operatorToken: config.operatorToken ?? stored!.operatorToken,
    tokenSecret: config.tokenSecret ?? stored!.tokenSecret,
  };
}

function readOrCreate(file: string): Secrets {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Secrets;
  } catch {
    const fresh: Secrets = {
      operatorToken: `dpo_${crypto.randomBytes(24).toString('base64url')}`,
      tokenSecret: crypto.randomBytes(32).toString('base64url'),
    };
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      // 'wx': when two processes start at once, one creates the file and the other reads it.
      fs.writeFileSync(file, JSON.stringify(fresh), { mode: 0o600, flag: 'wx' });
      return fresh;
    } catch {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as Secrets;
    }
  }
}

/**
 * The key of the Task service's token routes: the configured one, or one
 * derived from the signing secret, so the worker, the gateways and the
 * embedded service agree without another secret to keep. It only ever
 * issues agent tokens; task requests never carry it.
 */
export function taskAdminKey(config: DipperConfig, secrets: Secrets): string {
  if (config.taskApi.adminKey) return config.taskApi.adminKey;
  return `dtk_${crypto.createHmac('sha256', secrets.tokenSecret).update('dipper task service admin key').digest('base64url')}`;
}

/**
 * The key of the iSphere audit chain's HMACs: the configured one
 * (DIPPER_AUDIT_KEY), or one derived from the signing secret. Whoever can
 * write the audit database without it cannot forge a chain that verifies.
 */
export function auditKey(config: DipperConfig, secrets: Secrets): string {
  return config.isphere.auditKey ?? derivedAuditKey(secrets.tokenSecret);
}

/** The audit key a deployment without DIPPER_AUDIT_KEY uses. */
export function derivedAuditKey(tokenSecret: string): string {
  return crypto.createHmac('sha256', tokenSecret).update('dipper isphere audit chain').digest('hex');
}
