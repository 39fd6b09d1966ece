import { createHash } from 'node:crypto';
import { ConnectorError } from '../common/isphere/errors';
import { canonicalJson } from '../common/canonicalJson';
import { isphereFileWorkflow, type FileOpInput, type FileOpResult } from '../../workflows/isphere/fileOp';
import type { Temporal } from '../temporal';
import { agentWorkflowId } from '../../workflows/ids';
import { agentIdKey, runIdKey } from '../../workflows/searchAttributes';

/** Why a file operation was refused, in the isphere codes. */
const REFUSED: Record<string, { code: 'PERMISSION_DENIED' | 'INVALID_ARGUMENT' | 'TARGET_NOT_FOUND' | 'CONNECTOR_FAILED'; field?: string }> = {
  outside_approved_dir: { code: 'PERMISSION_DENIED' },
  not_found: { code: 'TARGET_NOT_FOUND' },
  not_a_file: { code: 'INVALID_ARGUMENT' },
  too_large: { code: 'INVALID_ARGUMENT' },
  failed: { code: 'CONNECTOR_FAILED' },
};

/**
 * Runs a file operation on the run's host (src/workflows/isphere/fileOp.ts)
 * and waits for it within the call: the workflow id comes from the call, so
 * a repeated call attaches to the same operation.
 */
export async function runFileOp(workflows: Pick<Temporal, 'start'>, taskQueue: string, caller: { runId: string; agentId: string }, input: FileOpInput, field: string, waitMs: number): Promise<NonNullable<Extract<FileOpResult, { ok: true }>>> {
  const digest = createHash('sha256').update(canonicalJson(input)).digest('base64url').slice(0, 24);
  const handle = await workflows.start(isphereFileWorkflow, {
    workflowId: `${agentWorkflowId(caller.runId, caller.agentId)}/isphere-file/${digest}`,
    taskQueue,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    staticSummary: input.op === 'inspect' ? 'Hash a file to send to iSphere' : `Download ${input.files.length} iSphere file(s)`,
    // Found with its run in the Temporal UI and by `DipperRunId` queries.
    typedSearchAttributes: [
      { key: runIdKey, value: caller.runId },
      { key: agentIdKey, value: caller.agentId },
    ],
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectorError('TIMEOUT', 'The file operation is still running on the run\'s host; repeat the call to get its result.', true, { reason: 'file_op_in_progress' })), waitMs);
  });
  try {
    const result = (await Promise.race([handle.result(), late])) as FileOpResult;
    if (result.ok) return result;
    const refused = REFUSED[result.reason] ?? REFUSED.failed;
    throw new ConnectorError(refused.code, result.message, result.reason === 'failed', { reason: result.reason, field });
  } finally {
    clearTimeout(timer);
  }
}
