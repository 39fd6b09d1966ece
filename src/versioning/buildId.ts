import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const packageVersion = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The build id of a workflow bundle: the package version, for people, and a
 * digest of the bundle's code, so that any change to what the workflows do
 * (Dipper's code, the SDK's, a dependency's) is a new version and the same
 * code is the same version on every host. The bundle holds no absolute
 * paths, so two checkouts of one commit agree.
 */
export function buildIdOf(bundleCode: string | Buffer): string {
  return `${packageVersion}-${crypto.createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}
