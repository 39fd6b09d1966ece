import { ToolError } from '../../common/toolErrors';
import type { ServiceError } from '../../common/taskApi/client';

/** A suggested next call (contract section 8.2): advisory, it grants nothing. */
export interface SuggestedAction {
  tool: string;
  arguments: Record<string, unknown>;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * A refusal in the contract's shape: `{code, message, retryable,
 * field_errors?, suggested_action?}`. Codes are the Task service's own
 * (snake_case); only `field` is renamed to the model's field name.
 */
export function taskError(
  code: string,
  message: string,
  opts: { retryable?: boolean; fieldErrors?: Record<string, string>; suggested?: SuggestedAction } = {},
): ToolError {
  return new ToolError(
    code,
    message,
    {
      ...(opts.fieldErrors ? { field_errors: opts.fieldErrors } : {}),
      ...(opts.suggested ? { suggested_action: opts.suggested } : {}),
    },
    opts.retryable ?? false,
  );
}

/** The call, for a refusal's suggested action: which board and task it was about. */
export interface CallFacts {
  channel?: string;
  number?: number;
  /** The caller's boards, for a refusal naming an unknown one. */
  boards: string[];
}

/** A Task service refusal as the model sees it. Server faults (5xx) are retryable and say nothing of the inside. */
export function fromService(status: number, err: ServiceError, call: CallFacts): ToolError {
  if (status >= 500) return taskError('task_service_error', 'The Task service failed to answer. It is safe to retry a read; check before repeating a change.', { retryable: true });
  if (status === 401 || (status === 403 && err.code === 'forbidden')) {
    return taskError('task_service_unauthorized', "The Task service refused this agent's credential. An operator must check the Task API configuration.");
  }
  const field = err.field ? snake(err.field) : undefined;
  const fieldErrors = field ? { [field]: err.message } : undefined;
  const get = call.channel && call.number ? { tool: 'task_get', arguments: { channel: call.channel, number: call.number } } : undefined;
  switch (err.code) {
    case 'channel_not_found': {
      const boards = Array.isArray(err.details?.channels) ? (err.details.channels as string[]) : call.boards;
      return taskError(err.code, `No board "${call.channel ?? ''}" that you can use. Your boards: ${boards.join(', ') || '(none)'}.`, {
        fieldErrors: { channel: `one of: ${boards.join(', ')}` },
        suggested: boards[0] ? { tool: 'task_list', arguments: { channel: boards[0] } } : undefined,
      });
    }
    case 'stale_update':
      return taskError(err.code, 'The task changed since you read it. Read it again and redo your change on the current version.', {
        fieldErrors: { expected_updated_at: `the task was updated at ${String(err.details?.updatedAt ?? 'a later time')}` },
        suggested: get,
      });
    case 'task_not_found':
    case 'task_deleted':
      return taskError(err.code, err.message, { fieldErrors: fieldErrors ?? { number: err.message }, suggested: call.channel ? { tool: 'task_list', arguments: { channel: call.channel } } : undefined });
    default:
      return taskError(err.code, err.message, { fieldErrors, retryable: status === 429 });
  }
}

/** A mutation that may or may not have taken effect: the agent must look before doing it again. */
export function outcomeUnknown(call: CallFacts): ToolError {
  const look = call.channel
    ? call.number
      ? { tool: 'task_get', arguments: { channel: call.channel, number: call.number } }
      : { tool: 'task_list', arguments: { channel: call.channel } }
    : undefined;
  return taskError(
    'task_outcome_unknown',
    'The Task service did not answer in time, so this change may or may not have been made. Check with task_get or task_list before repeating it (a task_create with an idempotency_key can be repeated safely).',
    { suggested: look },
  );
}

export function serviceUnavailable(): ToolError {
  return taskError('task_service_unavailable', 'The Task service cannot be reached. Nothing was changed; try again shortly.', { retryable: true });
}
