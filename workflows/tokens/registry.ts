import { allHandlersFinished, condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { wakeSignal } from '../../src/common/pure/queryGuard';
import { revocationsQuery, revokeSignal, type TokenRegistryInput } from '../../src/common/pure/revocations';
import { RevocationState } from './state';

/**
 * With no cache, every refresh of every replica replays the whole history:
 * kept short, a refresh stays a few milliseconds of work. At 2000 events (a
 * day of ended runs) the replay cost grew with every run ended, four times a
 * second per replica, and on a loaded host refreshes began to miss their
 * deadline.
 */
const CONTINUE_AFTER_EVENTS = 250;

export async function tokenRegistryWorkflow(input: TokenRegistryInput): Promise<void> {
  const s = new RevocationState(input.entries, input.version);
  setHandler(revokeSignal, (r) => s.revoke(r));
  setHandler(wakeSignal, () => undefined);
  setHandler(revocationsQuery, (since) => s.since(since), { description: 'Revocations changed after a version: (since?: version, 0 for all).' });

  await condition(() => workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > CONTINUE_AFTER_EVENTS);
  await condition(allHandlersFinished);
  // Every token an old entry covers has expired by now (tokens live tokenTtlSeconds from their launch).
  await continueAsNew<typeof tokenRegistryWorkflow>({ tokenTtlSeconds: input.tokenTtlSeconds, ...s.carried(Date.now() - input.tokenTtlSeconds * 1000) });
}
