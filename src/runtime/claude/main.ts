import fs from 'node:fs';
import path from 'node:path';
import type { LaunchPayload } from '../../common/launchPayload';
import { runSession } from './session';
import { settingsFrom } from './settings';

/**
 * Entry of the `claude` runtime: one agent, one process, launched by the
 * worker like any command runtime (its payload on stdin, an environment
 * built from nothing), so the other-user isolation, the network fence and
 * the crash ladder apply unchanged.
 */
async function main(): Promise<void> {
  const payload = JSON.parse(fs.readFileSync(0, 'utf8')) as LaunchPayload;
  const home = process.env.HOME;
  if (!home) throw new Error('HOME is not set');
  fs.mkdirSync(path.join(home, '.claude'), { recursive: true, mode: 0o700 });
  // Dipper stops a runtime with SIGTERM to its process group (the CLI gets it too): that is an end, not a crash.
  process.once('SIGTERM', () => {
    process.stderr.write(`${new Date().toISOString()} stopped by Dipper\n`);
    process.exit(0);
  });
  process.exitCode = await runSession(payload, settingsFrom(process.env), home);
}

main().catch((err: unknown) => {
  process.stderr.write(`claude runtime failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
