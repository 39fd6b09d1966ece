// The worker's single workflowsPath: every workflow type Dipper runs.
export { agentWorkflow } from './agent/workflow';
export { runWorkflow } from './run/workflow';
export { questionWorkflow } from './question/workflow';
export { echoWorkflow } from './bench/echoWorkflow';
export { tokenRegistryWorkflow } from './tokens/registry';
export { isphereApprovalWorkflow } from './isphere/approval';
export { isphereFileWorkflow } from './isphere/fileOp';
// Last: says how each type above moves between versions of this code.
import './versioning';
