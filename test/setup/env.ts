import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../support/processes';

/** What globalSetup started, for test files (which act as clients) to find. */
export interface TestEnv {
  gatewayUrl: string;
  operatorToken: string;
  tokenSecret: string;
  temporalAddress: string;
  namespace: string;
  dataDir: string;
  skillsDir: string;
  bundlePath: string;
  /** Environment the shared worker and gateway run with; tests that start their own processes extend it. */
  processEnv: Record<string, string>;
  pids: { worker: number; gateway: number; temporal?: number };
}

export const testDataRoot = path.join(projectRoot, '.test-data');
const envFile = path.join(testDataRoot, 'env.json');

export function writeTestEnv(env: TestEnv): void {
  fs.mkdirSync(testDataRoot, { recursive: true });
  fs.writeFileSync(envFile, JSON.stringify(env, null, 2));
}

export function readTestEnv(): TestEnv {
  return JSON.parse(fs.readFileSync(envFile, 'utf8')) as TestEnv;
}
