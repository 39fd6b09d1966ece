import { ApplicationFailure, log } from '@temporalio/activity';
import { UnsafePathSegment } from '../src/paths';

/** errno codes a retry cannot cure; anything else (a full disk, too many open files) may pass, so it is retried. */
const PERMANENT = new Set(['ENAMETOOLONG', 'EINVAL', 'ENOTDIR', 'EISDIR', 'EEXIST', 'ELOOP', 'EPERM', 'EACCES', 'EROFS']);

/**
 * What a failed disk operation becomes: `internal` with a fixed message.
 * A Node error's text holds the server's paths and errno codes, and a
 * workflow hands an activity's failure to the caller of the tool that ran it,
 * so that text never leaves here; the operator gets the operation and errno
 * code in the worker's log.
 */
export function diskFailure(op: string, err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const errno = err instanceof UnsafePathSegment ? 'unsafe_path_segment' : ((err as NodeJS.ErrnoException)?.code ?? 'unknown');
  try {
    log.warn('disk operation failed', { op, errno });
  } catch {
    // Called outside an activity (a unit test): there is no activity log to write to.
  }
  return ApplicationFailure.create({
    type: 'internal',
    message: 'Dipper could not update its data folder.',
    nonRetryable: errno === 'unsafe_path_segment' || PERMANENT.has(errno),
  });
}

export async function onDisk<T>(op: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw diskFailure(op, err);
  }
}
