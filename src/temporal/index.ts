// Dipper's one path to Temporal as a client (eslint.config.js keeps `@temporalio/client` inside this folder).
export { Temporal, typeIs, type ConnectOptions, type StartOptions, type WorkflowSummary } from './temporal';
export { WorkflowRef, type AcceptedUpdate, type History, type WorkflowDescription } from './handle';
export { TemporalAdmin, isNotFoundStatus, type DeploymentInfo } from './admin';
export { budget, beforeDeadline, callDeadline, MIN_QUERY_ATTEMPT_MS, NoAnswerInTime, queryCapMs, queryRetryAt, underDeadline } from './deadlines';
export { backoff, isRetryable, MAX_ATTEMPTS } from './retry';
export { failureOf, grpcStatus, queryMayAnswerLater, isAlreadyStarted, isNotFound, isphereRefusal, NotFound, toolFailure, updateFailureOf, WorkflowRefusal, type Failure } from './errors';
export { keepsFailing } from './health';
