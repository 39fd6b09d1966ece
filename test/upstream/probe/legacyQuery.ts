import { condition, defineQuery, defineSignal, defineUpdate, setHandler, sleep } from '@temporalio/workflow';

export const pokeSignal = defineSignal('poke');
export const pokedQuery = defineQuery<boolean>('poked');
export const noteUpdate = defineUpdate<number>('note');

/**
 * Waits for a poke, then starts a timer: the poke's workflow task issues
 * a command (StartTimer), as Dipper's agents start their event-write timer.
 * The first task issues none, so a test can complete it by hand.
 */
export async function pokedThenTimerProbe(): Promise<void> {
  let poked = false;
  let notes = 0;
  setHandler(pokeSignal, () => void (poked = true));
  setHandler(pokedQuery, () => poked);
  setHandler(noteUpdate, () => ++notes);
  await condition(() => poked);
  await sleep('1 hour');
}
