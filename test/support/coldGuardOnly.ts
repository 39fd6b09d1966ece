import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { QueryCannotAdvance } from '../../workflows/interceptors';

/**
 * Workflow interceptors for a bundle with one Query guard only, the one for an instance that never ran a task live
 * (QUERY_COLD): test/durability/doctor.test.ts runs its crash on such workflows to show the other guard earns its place.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({ internals: [new QueryCannotAdvance({ growth: false })] });
