import fs from 'node:fs/promises';
import path from 'node:path';

/** Skill names are folder names; nothing else may reach the file system. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/**
 * Skills are SKILL.md files in a configured folder, either
 * `<skills>/<name>/SKILL.md` or `<skills>/<name>.md`.
 */
export class SkillCatalog {
  constructor(private readonly dir: string) {}

  private candidates(name: string): string[] {
    return [path.join(this.dir, name, 'SKILL.md'), path.join(this.dir, `${name}.md`)];
  }

  async exists(name: string): Promise<boolean> {
    if (!NAME.test(name)) return false;
    for (const file of this.candidates(name)) {
      try {
        if ((await fs.stat(file)).isFile()) return true;
      } catch {
        // try the next layout
      }
    }
    return false;
  }

  /** Every skill there is, by name, sorted (at most 200: the list goes into error messages and first messages). */
  async names(): Promise<string[]> {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fs.readdir(this.dir, { withFileTypes: true });
    } catch {
      return [];
    }
    const found = new Set<string>();
    for (const e of entries) {
      if (e.isFile() && e.name.endsWith('.md') && NAME.test(e.name.slice(0, -3))) found.add(e.name.slice(0, -3));
      else if (e.isDirectory() && NAME.test(e.name) && (await this.exists(e.name))) found.add(e.name);
    }
    return [...found].sort().slice(0, 200);
  }

  /** The skill's body, or null when it cannot be loaded. */
  async load(name: string): Promise<string | null> {
    if (!NAME.test(name)) return null;
    for (const file of this.candidates(name)) {
      try {
        return await fs.readFile(file, 'utf8');
      } catch {
        // try the next layout
      }
    }
    return null;
  }
}
