/** Every probe of test/upstream, in one workflow bundle. */
export { flushLoopProbe } from './emptyTask';
export { pokedThenTimerProbe } from './legacyQuery';
export { firstTaskProbe } from './firstTask';
export { dipperFlushProbe } from './dipperFlush';
