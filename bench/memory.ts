import fs from 'node:fs';

/** Resident set size of a process in MiB, from /proc (Linux); undefined when it cannot be read. */
export function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}
