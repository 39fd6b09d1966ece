import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../support/processes';

/** What globalSetup started, for test files (which act as clients) to find. */
export interface TestEnv {
  gatewayUrl: string;
  /** The shared worker's metrics and health page. */
  workerMetricsUrl: string;
  operatorToken: string;
  tokenSecret: string;
  temporalAddress: string;
  namespace: string;
  dataDir: string;
  skillsDir: string;
  bundlePath: string;
  /** Environment the shared worker and gateway run with; tests that start their own processes extend it. */
  processEnv: Record<string, string>;
  pids: { worker: number; gateway: number; temporal?: number; taskService?: number; bridgeSim?: number };
  /** The iSphere bridge simulator the gateway reads from, its control token, and the local store export beside it. */
  isphere: { bridgeUrl: string; controlToken: string; localStore: string };
}

/**
 * Each jest run gets its own folder (named in DIPPER_TEST_DATA by
 * globalSetup, which test processes inherit), so two runs on one machine
 * never delete each other's data.
 */
export const testDataRoot = process.env.DIPPER_TEST_DATA ?? path.join(projectRoot, '.test-data', 'current');

export function writeTestEnv(dir: string, env: TestEnv): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'env.json'), JSON.stringify(env, null, 2));
}

/** `root` for code loaded before globalSetup named the folder (globalTeardown shares globalSetup's modules). */
export function readTestEnv(root = testDataRoot): TestEnv {
  return JSON.parse(fs.readFileSync(path.join(root, 'env.json'), 'utf8')) as TestEnv;
}
