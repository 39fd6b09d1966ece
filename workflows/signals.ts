import { getExternalWorkflowHandle, type SignalDefinition } from '@temporalio/workflow';

/**
 * Signals another workflow of the run. Signalling fails only when the
 * target has closed (its run ended, or it never started); then there is
 * nobody left to tell, and that must not fail the sender.
 */
export async function tell<Args extends unknown[]>(workflowId: string, def: SignalDefinition<Args>, ...args: Args): Promise<boolean> {
  try {
    await getExternalWorkflowHandle(workflowId).signal(def, ...args);
    return true;
  } catch {
    return false;
  }
}
