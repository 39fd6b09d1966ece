import path from 'node:path';
import type { BundleOptions } from '@temporalio/worker';

const WORKFLOWS = path.join(__dirname, '..', '..', 'workflows');
const INDEX = path.join(WORKFLOWS, 'index.ts');
const INTERCEPTORS = path.join(WORKFLOWS, 'interceptors.ts');

/**
 * How Dipper's workflow code is bundled: by workers, for replays (`dipper
 * doctor`, the tests' end-of-run check) and by tests that swap the
 * interceptors. The same options everywhere, so a replay costs what a
 * worker's start of the workflow costs.
 *
 * Every module of the bundle is preloaded: the SDK evaluates it once per
 * workflow thread into the reusable V8 context's shared module cache
 * (deep-frozen exports), and each new workflow finds it there. Without it
 * each workflow evaluates its own copy of all 54 of Dipper's modules when it
 * is created, live or replayed: 113 KiB of heap kept for as long as the
 * workflow stays cached, and about 2 ms of its first task (docs/performance.md,
 * "Workflow modules loaded once"). Sharing is safe because these modules
 * keep no state at module scope: the lint forbids module-level `let` and
 * mutable collections in workflows/ and src/common/pure/
 * (eslint.config.js, SHARED_MODULE_STATE), and every per-workflow value
 * lives in the workflow function's own closure or the SDK's activator.
 */
export function workflowBundleOptions(o: { interceptors?: string[]; logger?: BundleOptions['logger'] } = {}): BundleOptions {
  return {
    workflowsPath: INDEX,
    workflowInterceptorModules: o.interceptors ?? [INTERCEPTORS],
    preloadModules: [INDEX, INTERCEPTORS],
    ...(o.logger ? { logger: o.logger } : {}),
  };
}
