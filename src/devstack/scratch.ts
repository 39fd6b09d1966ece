import fs from 'node:fs';
import path from 'node:path';

/**
 * Tests and benches keep their files in `<root>/run-<pid>`; folders whose
 * process is gone are removed, and a run that is still going keeps its own.
 */
export function removeStaleRunFolders(root: string): void {
  for (const name of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (!pid) continue;
    try {
      process.kill(pid, 0);
    } catch {
      fs.rmSync(path.join(root, name), { recursive: true, force: true });
    }
  }
}
