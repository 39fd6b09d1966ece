import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEMPORAL_SERVER_VERSION } from '../common/version';
import { clusterTest } from './cluster';
import { localBin, projectRoot } from '../common/projectRoot';

const DOC = path.join(projectRoot, 'docs', 'operations.md');
const START = '<!-- release-check:start -->';
const END = '<!-- release-check:end -->';

interface JestSummary {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTotalTestSuites: number;
  success: boolean;
}

const log = (line: string) => process.stderr.write(`release-check: ${line}\n`);

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

function readSummary(file: string): JestSummary | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as JestSummary;
  } catch {
    return null;
  }
}

/** jest on the usual test stack (its own dev server): the embedded stack's backup and restore. */
function jestRun(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const jest = spawn(localBin('jest'), ['--runInBand', ...args], { cwd: projectRoot, stdio: 'inherit' });
    jest.once('exit', (code) => resolve(code ?? 1));
  });
}

/**
 * `npm run release-check`: every cluster test (cluster, end-to-end and
 * durability suites on the Go-built Temporal server and PostgreSQL, the
 * cluster's restart and backup/restore included) and the embedded stack's
 * backup and restore, then their dated figures into docs/operations.md
 * between its release-check markers. Outside CI: it takes about ten
 * minutes on two cores and needs Go, HAProxy and PostgreSQL.
 */
export async function releaseCheck(): Promise<number> {
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--untracked-files=no']) !== '';
  if (dirty) log('the checkout has uncommitted changes: the figures name the commit, so they are marked as not from a clean checkout');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-release-check-'));
  const clusterJson = path.join(out, 'cluster.json');
  const backupJson = path.join(out, 'backup.json');

  const clusterStarted = Date.now();
  const clusterCode = await clusterTest(['test/cluster', 'test/e2e', 'test/durability', '--json', '--outputFile', clusterJson]);
  const clusterSeconds = Math.round((Date.now() - clusterStarted) / 1000);
  const cluster = readSummary(clusterJson);

  const backupStarted = Date.now();
  const backupCode = await jestRun(['test/cli/backup.test.ts', '--json', '--outputFile', backupJson]);
  const backupSeconds = Math.round((Date.now() - backupStarted) / 1000);
  const backup = readSummary(backupJson);

  const passed = clusterCode === 0 && backupCode === 0 && cluster?.success === true && backup?.success === true;
  const figures = [
    START,
    `Last run ${new Date().toISOString().slice(0, 10)} on commit ${commit}${dirty ? ' (with uncommitted changes)' : ''}, ${os.cpus().length} cores, Temporal server ${TEMPORAL_SERVER_VERSION} built from its Go module: **${passed ? 'passed' : 'failed'}**.`,
    '',
    `- \`dipper cluster test\` (test/cluster, test/e2e, test/durability against the cluster): ${cluster ? `${cluster.numPassedTests} of ${cluster.numTotalTests} tests passed, ${cluster.numFailedTests} failed, ${cluster.numPendingTests} skipped, in ${cluster.numTotalTestSuites} files` : 'no results (it did not start)'}; ${clusterSeconds} s with the cluster's start and stop.`,
    `- Backup and restore of the embedded stack (test/cli/backup.test.ts): ${backup ? (backup.success ? 'passed' : 'failed') : 'no results'} in ${backupSeconds} s. The cluster's (test/cluster/backup.test.ts) is among the cluster tests above.`,
    END,
  ].join('\n');
  const doc = fs.readFileSync(DOC, 'utf8');
  const at = doc.indexOf(START);
  const until = doc.indexOf(END);
  fs.writeFileSync(DOC, at >= 0 && until > at ? `${doc.slice(0, at)}${figures}${doc.slice(until + END.length)}` : `${doc.trimEnd()}\n\n## Release check\n\n${figures}\n`);
  log(`${passed ? 'passed' : 'FAILED'}; figures written to docs/operations.md`);
  fs.rmSync(out, { recursive: true, force: true });
  return passed ? 0 : 1;
}
