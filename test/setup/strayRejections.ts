/**
 * Jest runs every file in one process (--runInBand), where Node ends the
 * process on a rejection nobody handled. A call a test left in flight that
 * rejects when its client closes would then kill the whole run at that file
 * and hide the failure that left it behind. Instead each one is printed as it
 * happens and counted, and the run fails at its end with them listed.
 * Registered on the real process: a handler added inside a test file lands
 * on jest's sandboxed `process` and never sees them.
 */
const key = '__dipperStrayRejections';
type Holder = { [key]?: string[] };

export function watchStrayRejections(): void {
  const holder = globalThis as Holder;
  if (holder[key]) return;
  const stray: string[] = (holder[key] = []);
  process.on('unhandledRejection', (reason) => {
    const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
    stray.push(text);
    console.error(`dipper: a promise a test left behind rejected with nobody listening: ${text}`);
  });
}

export function strayRejections(): string[] {
  return (globalThis as Holder)[key] ?? [];
}
