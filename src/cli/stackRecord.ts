import fs from 'node:fs';
import path from 'node:path';
import { type DipperConfig, loadConfig, temporalAddress } from '../config';
import { isRunning, processStartTime } from '../devstack/processes';

/**
 * What `npm start` writes about the stack it runs, so that every other
 * command reaches that stack without repeating its settings. No secrets: the
 * operator token stays in <data>/secrets.json, found through dataDir.
 */
export interface StackRecord {
  /** The supervisor: the node process running `dipper up`. */
  pid: number;
  /** Its kernel start time, so a recycled pid is never taken for it. */
  pidStart: string | null;
  startedAt: string;
  dataDir: string;
  host: string;
  port: number;
  gatewayUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string; uiUrl: string | null; bundled: boolean };
  /** Current pid of each supervised process, rewritten on every restart. */
  processes: Record<string, number | undefined>;
}

export function newStackRecord(config: DipperConfig, uiUrl: string | null): StackRecord {
  return {
    pid: process.pid,
    pidStart: processStartTime(process.pid),
    startedAt: new Date().toISOString(),
    dataDir: config.dataDir,
    host: config.host,
    port: config.port,
    gatewayUrl: config.publicUrl,
    temporal: {
      address: temporalAddress(config),
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      uiUrl,
      bundled: !config.temporal.address,
    },
    processes: {},
  };
}

/** Written whole and renamed into place, so a reader never sees half a file; 0600 like secrets.json. */
export function writeStackRecord(file: string, record: StackRecord): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(partial, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(partial, file);
}

/** The recorded stack if its supervisor still runs; a record left by a killed one is ignored. */
export function readLiveStack(file: string): StackRecord | undefined {
  let record: StackRecord;
  try {
    record = JSON.parse(fs.readFileSync(file, 'utf8')) as StackRecord;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(record.pid) || !isRunning(record.pid)) return undefined;
  if (record.pidStart && processStartTime(record.pid) !== record.pidStart) return undefined;
  return record;
}

/** Removes the record if it is this process's: a newer stack may have replaced it. */
export function removeOwnStackRecord(file: string): void {
  try {
    const record = JSON.parse(fs.readFileSync(file, 'utf8')) as StackRecord;
    if (record.pid === process.pid) fs.rmSync(file, { force: true });
  } catch {
    // already gone, or not ours to judge
  }
}

/** The settings that reach the recorded stack, as the environment variables loadConfig reads. */
export function stackEnv(record: StackRecord): Record<string, string> {
  return {
    DIPPER_DATA_DIR: record.dataDir,
    DIPPER_HOST: record.host,
    DIPPER_PORT: String(record.port),
    DIPPER_PUBLIC_URL: record.gatewayUrl,
    TEMPORAL_ADDRESS: record.temporal.address,
    TEMPORAL_NAMESPACE: record.temporal.namespace,
    DIPPER_TASK_QUEUE: record.temporal.taskQueue,
  };
}

/**
 * Configuration for a command that talks to the stack: the recorded stack's
 * settings, under whatever the environment sets explicitly.
 */
export function loadStackConfig(env: NodeJS.ProcessEnv = process.env): DipperConfig {
  const config = loadConfig(env);
  const stack = readLiveStack(config.stackFile);
  return stack ? loadConfig({ ...stackEnv(stack), ...env }) : config;
}
