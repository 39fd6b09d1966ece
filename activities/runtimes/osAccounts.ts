import fs from 'node:fs';

/** The number of a user (from /etc/passwd) or group (from /etc/group) named or numbered; null if there is none. */
function idOf(file: string, nameOrId: string | number): number | null {
  if (typeof nameOrId === 'number' || /^\d+$/.test(nameOrId)) return Number(nameOrId);
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === nameOrId && /^\d+$/.test(fields[2] ?? '')) return Number(fields[2]);
  }
  return null;
}

export const userId = (nameOrId: string | number, passwd = '/etc/passwd') => idOf(passwd, nameOrId);
export const groupId = (nameOrId: string | number, group = '/etc/group') => idOf(group, nameOrId);
