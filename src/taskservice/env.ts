import path from 'node:path';
import type { DipperConfig } from '../config';

/** The environment the embedded Task service (main.ts) is started with, from Dipper's configuration. */
export function taskServiceEnv(config: DipperConfig, adminKey: string): Record<string, string> {
  return {
    DIPPER_TASK_SERVICE_DB: path.join(config.dataDir, 'tasks.db'),
    DIPPER_TASK_SERVICE_PORT: String(config.taskApi.servicePort),
    DIPPER_TASK_SERVICE_HOST: '127.0.0.1',
    DIPPER_TASK_ADMIN_KEY: adminKey,
  };
}
