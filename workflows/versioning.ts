import type { VersioningBehavior } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { agentWorkflow } from './agent/workflow';
import { echoWorkflow } from './bench/echoWorkflow';
import { isphereApprovalWorkflow } from './isphere/approval';
import { isphereFileWorkflow } from './isphere/fileOp';
import { questionWorkflow } from './question/workflow';
import { runWorkflow } from './run/workflow';
import { tokenRegistryWorkflow } from './tokens/registry';

/**
 * How each workflow type moves between versions of this code (docs/decisions.md, "Versions of the workflow code").
 * PINNED: short operations, which finish on the code that started them; the old version's workers stay until they
 * have (the version reports itself drained). AUTO_UPGRADE: everything that lives for hours or forever, which goes on
 * under the new code at its next task, and so must replay its history there (patched(), test/replay).
 */
const types = { isphereFileWorkflow, echoWorkflow, runWorkflow, agentWorkflow, questionWorkflow, isphereApprovalWorkflow, tokenRegistryWorkflow };

export const versioningBehaviour: Record<keyof typeof types, VersioningBehavior> = {
  isphereFileWorkflow: 'PINNED',
  echoWorkflow: 'PINNED',
  runWorkflow: 'AUTO_UPGRADE',
  agentWorkflow: 'AUTO_UPGRADE',
  questionWorkflow: 'AUTO_UPGRADE',
  isphereApprovalWorkflow: 'AUTO_UPGRADE',
  tokenRegistryWorkflow: 'AUTO_UPGRADE',
};

// An unversioned worker (DIPPER_WORKER_VERSIONING=off) must not name a behaviour: the server refuses its every task
// ("versioning behavior cannot be specified without deployment options"). Which worker ran the first task is in the
// history, so the choice replays the same.
for (const [name, fn] of Object.entries(types) as [keyof typeof types, (...args: never[]) => Promise<unknown>][]) {
  setWorkflowOptions(() => (workflowInfo().currentDeploymentVersion ? { versioningBehavior: versioningBehaviour[name] } : {}), fn);
}
