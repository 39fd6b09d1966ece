import { TEMPORAL_SERVER_VERSION } from '../common/version';
import type { Logger } from '../log';
import { safeMessage } from '../log';

/** What needs a server release newer than some: the oldest that has it, and what is off without it. */
const NEEDS: { since: string; what: string }[] = [
  { since: '1.28.0', what: 'worker versioning (deployment versions) is unavailable; start workers with DIPPER_WORKER_VERSIONING=off' },
  { since: '1.30.0', what: 'failing workflow tasks are not flagged (TemporalReportedProblems), so the Temporal UI cannot list the workflows whose tasks keep failing (dipper doctor still finds them)' },
];

function parts(version: string): number[] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  return m ? m.slice(1, 4).map(Number) : undefined;
}

/** a < b, by release numbers; undefined when either is not a release. */
export function olderThan(a: string, b: string): boolean | undefined {
  const x = parts(a);
  const y = parts(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] < y[i];
  return false;
}

/**
 * What a worker should say about the server it found, once at start: nothing
 * on the release Dipper is tested on or newer; what is off and why on an
 * older one; that it is untested on one that does not say its release.
 */
export function serverFindings(version: string): { level: 'info' | 'warn'; message: string }[] {
  const tested = TEMPORAL_SERVER_VERSION.slice(1);
  if (olderThan(version, TEMPORAL_SERVER_VERSION) === undefined) return [{ level: 'warn', message: `the Temporal server did not say its release; Dipper is tested on ${tested}` }];
  const off = NEEDS.filter((n) => olderThan(version, n.since));
  if (off.length === 0) return [];
  return off.map((n) => ({ level: 'warn', message: `Temporal server ${version} is older than ${n.since}: ${n.what} (Dipper is tested on ${tested})` }));
}

/** Asks the server its release and logs the findings; a server that does not answer is the stall watch's to report. */
export async function checkServer(serverVersion: () => Promise<string>, log: Logger): Promise<void> {
  let version: string;
  try {
    version = await serverVersion();
  } catch (err) {
    log.warn({ err: safeMessage(err) }, 'could not ask the Temporal server its release');
    return;
  }
  log.info({ temporalServer: version }, 'Temporal server');
  for (const f of serverFindings(version)) log[f.level]({ temporalServer: version }, f.message);
}
