// Dipper's one path to Temporal as a client (eslint.config.js keeps `@temporalio/client` inside this folder).
export { Temporal, typeIs, type ConnectOptions, type StartOptions, type WorkflowSummary } from './temporal';
export { WorkflowRef, type AcceptedUpdate, type History, type WorkflowDescription } from './handle';
export { TemporalAdmin, isNotFoundStatus, type DeploymentInfo } from './admin';
export { beforeDeadline, callDeadline, NoAnswerInTime, queryCapMs, underDeadline } from './deadlines';
export { callTime, type CallPolicy, type CallTime } from './policy';
export { failureOf, grpcStatus, queryMayAnswerLater, isAlreadyStarted, isNotFound, isphereRefusal, NotFound, toolFailure, updateFailureOf, WorkflowRefusal, type Failure } from './errors';
export { keepsFailing } from './health';
