/**
 * Tells the process that started this one (`npm start`, over an IPC
 * channel) that its start-up is over, so everything it logged so far comes
 * before the banner. Started any other way there is no channel: nothing to do.
 */
export function tellStarted(): void {
  if (!process.send) return;
  // The channel goes once the word is out: it would otherwise hold the process open on its way down.
  process.send({ dipper: 'started' }, () => process.disconnect?.());
}

/** The word tellStarted sends. */
export const isStartedMessage = (m: unknown): boolean => typeof m === 'object' && m !== null && (m as { dipper?: unknown }).dipper === 'started';
