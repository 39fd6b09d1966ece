export { BridgeConnector } from './bridge';
export { matchConfidence } from './confidence';
export { LocalReadonlyConnector } from './localReadonly';
export { MockConnector } from './mock';
export { Sources, type Sourced } from './select';
export * from './types';
export { UnavailableConnector } from './unavailable';
