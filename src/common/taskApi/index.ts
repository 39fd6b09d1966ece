import { taskAdminKey, type Secrets } from '../../auth/secrets';
import { taskApiUrl, type DipperConfig } from '../../config';
import { TaskApiClient } from './client';

/** The Task API client of a worker or gateway, from its configuration. */
export function taskApiClient(config: DipperConfig, secrets: Secrets): TaskApiClient {
  return new TaskApiClient({
    baseUrl: taskApiUrl(config),
    workspace: config.taskApi.workspace,
    adminKey: taskAdminKey(config, secrets),
    requestTimeoutMs: config.taskApi.requestTimeoutMs,
  });
}
