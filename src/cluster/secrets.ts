import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { secretOf } from '../config';

/** What every process of a cluster must share, and keep across restarts: change one and every token of before is refused. */
export interface ClusterSecrets {
  operatorToken: string;
  tokenSecret: string;
  taskAdminKey: string;
}

const VARS: Record<keyof ClusterSecrets, string> = {
  operatorToken: 'DIPPER_OPERATOR_TOKEN',
  tokenSecret: 'DIPPER_TOKEN_SECRET',
  taskAdminKey: 'DIPPER_TASK_ADMIN_KEY',
};

const generate: Record<keyof ClusterSecrets, () => string> = {
  operatorToken: () => `dpo_cluster_${crypto.randomBytes(18).toString('base64url')}`,
  tokenSecret: () => crypto.randomBytes(32).toString('hex'),
  taskAdminKey: () => `dtk_cluster_${crypto.randomBytes(18).toString('base64url')}`,
};

/**
 * Each secret from, in order: its variable (`DIPPER_OPERATOR_TOKEN`), a
 * file its `_FILE` variable names (a Docker or systemd secret), or
 * `<dir>/secrets.json`, where one generated at the first start is kept
 * (mode 0600) and read at every later one. Where each came from is
 * returned too, for the banner.
 */
export function clusterSecrets(dir: string, env: NodeJS.ProcessEnv = process.env): { secrets: ClusterSecrets; from: Record<keyof ClusterSecrets, string> } {
  const file = path.join(dir, 'secrets.json');
  let kept: Partial<ClusterSecrets> = {};
  try {
    kept = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ClusterSecrets>;
  } catch {
    // First start: generated below.
  }
  const secrets = {} as ClusterSecrets;
  const from = {} as Record<keyof ClusterSecrets, string>;
  let changed = false;
  for (const key of Object.keys(VARS) as (keyof ClusterSecrets)[]) {
    const name = VARS[key];
    const given = secretOf(env, name);
    if (given !== undefined) [secrets[key], from[key]] = [given, env[name] ? name : env[`${name}_FILE`]!];
    else if (kept[key]) [secrets[key], from[key]] = [kept[key]!, file];
    else {
      [secrets[key], from[key]] = [generate[key](), `${file} (generated)`];
      kept[key] = secrets[key];
      changed = true;
    }
  }
  if (changed) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, JSON.stringify(kept, null, 2), { mode: 0o600 });
    fs.chmodSync(file, 0o600);
  }
  return { secrets, from };
}
