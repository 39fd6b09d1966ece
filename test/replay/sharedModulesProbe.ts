import fs from 'node:fs';
import { TypedSearchAttributes } from '@temporalio/common';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';

/**
 * Run by sharedModules.test.ts in a process of its own (a workflow creator installs the SDK's promise hook on its
 * thread for good): creates one workflow of each type named with the bundle at argv[2], as a worker's thread does,
 * and prints the modules each evaluated for itself rather than finding in the thread's shared cache.
 */
async function main(bundlePath: string, types: string[]): Promise<void> {
  const code = fs.readFileSync(bundlePath, 'utf8');
  const creator = await ReusableVMWorkflowCreator.create({ code, filename: 'workflow-bundle.js', sourceMap: { version: 3, sources: [], names: [], mappings: '' } } as never, 10_000, new Set(), undefined as never);
  const own: Record<string, string[]> = {};
  for (const [i, workflowType] of types.entries()) {
    const runId = `run-${i}`;
    const info = {
      workflowId: `wf-${i}`, runId, workflowType, searchAttributes: {}, typedSearchAttributes: new TypedSearchAttributes(), taskQueue: 'probe', namespace: 'probe',
      firstExecutionRunId: runId, originalExecutionRunId: runId, startTime: new Date(0), runStartTime: new Date(0), taskTimeoutMs: 10_000, attempt: 1,
      historyLength: 3, historySize: 0, continueAsNewSuggested: false, targetWorkerDeploymentVersionChanged: false, suggestedContinueAsNewReasons: [],
      currentBuildId: '', unsafe: { now: () => 0, isReplaying: false, isReplayingHistoryEvents: false, random: () => 0.5 }, priority: {},
    };
    const workflow = (await creator.createWorkflow({ info, randomnessSeed: [1, 2, 3, 4, 5, 6, 7, 8], now: 0, showStackTraceSources: false, failureExceptionTypeNames: [] } as never)) as unknown as { activator: { moduleCache: Map<string, unknown> } };
    // Webpack's stand-ins for modules the bundler leaves out start with '?': they are no code of Dipper's.
    own[workflowType] = [...workflow.activator.moduleCache.keys()].filter((k) => !k.startsWith('?'));
  }
  process.stdout.write(JSON.stringify(own));
}

main(process.argv[2], process.argv.slice(3)).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
