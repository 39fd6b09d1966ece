import { ActivityFailure, ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { DownloadInput, IsphereActivities } from '../../activities/isphere/send';
import type { Inspected } from '../../activities/isphere/files';
import { hostQueue } from '../ids';

export type FileOpInput = { host?: string } & ({ op: 'inspect'; runId: string; filePath: string } | ({ op: 'download' } & DownloadInput));

export type FileOpResult =
  | { ok: true; inspected?: Inspected; saved?: { file_id: string; saved_path: string; size_bytes: number; sha256: string }[] }
  | { ok: false; reason: string; message: string };

/**
 * One file operation of an isphere call on the run's host (hashing a file
 * to send, a download), as a short workflow: its id comes from the call, so
 * a repeated call attaches to the same operation; one activity with bounded
 * attempts, so it cannot wedge or grow.
 */
export async function isphereFileWorkflow(input: FileOpInput): Promise<FileOpResult> {
  const acts = proxyActivities<IsphereActivities>({
    ...(input.host ? { taskQueue: hostQueue(workflowInfo().taskQueue, input.host), scheduleToStartTimeout: '10s' } : {}),
    startToCloseTimeout: '60s',
    retry: { initialInterval: '500ms', maximumAttempts: 3 },
  });
  try {
    if (input.op === 'inspect') return { ok: true, inspected: await acts.isphereInspectFile({ runId: input.runId, filePath: input.filePath }) };
    return { ok: true, saved: await acts.isphereDownload({ runId: input.runId, dir: input.dir, files: input.files }) };
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type === 'FileRefused') {
      return { ok: false, reason: String((cause.details?.[0] as { reason?: string } | undefined)?.reason ?? 'refused'), message: cause.message };
    }
    return { ok: false, reason: 'failed', message: 'The file operation failed on every attempt.' };
  }
}
