/**
 * Everything Dipper writes (its database files, secrets, plans, event log,
 * run folders, and the Temporal dev server's database) is its own: no group
 * or other access. Set once at the top of each process, before any file is
 * made, and inherited by the processes it starts.
 */
export const PRIVATE_UMASK = 0o077;

export function keepFilesPrivate(): void {
  process.umask(PRIVATE_UMASK);
}
