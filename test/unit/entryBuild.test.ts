import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { nodeArgs } from '../../src/devstack/entryBuild';
import { projectRoot } from '../../src/devstack/dipperProcess';

/** A checkout of two modules: the worker's entry prints what the module beside it says, and where it runs from. */
function checkout(): { root: string; say(text: string): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-entry-'));
  fs.mkdirSync(path.join(root, 'src', 'worker'), { recursive: true });
  fs.mkdirSync(path.join(root, 'src', 'common'), { recursive: true });
  fs.writeFileSync(path.join(root, 'src', 'worker', 'main.ts'), "import { text } from '../common/text';\nconst where: string = __dirname;\nconsole.log(`${text} ${where}`);\n");
  const say = (text: string) => fs.writeFileSync(path.join(root, 'src', 'common', 'text.ts'), `export const text: string = ${JSON.stringify(text)};\n`);
  say('first');
  return { root, say };
}

function run(args: string[]): string {
  return execFileSync(process.execPath, args, { encoding: 'utf8' }).trim();
}

it('starts an entry from one JavaScript file built beside it, where its own folder is the source folder', () => {
  const { root } = checkout();
  const args = nodeArgs('worker', root);
  expect(args).toEqual([path.join(root, 'src', 'worker', 'main.built.js')]);
  expect(run(args)).toBe(`first ${path.join(root, 'src', 'worker')}`);
});

it('builds again when a module it holds changed, and not otherwise', () => {
  const { root, say } = checkout();
  const built = nodeArgs('worker', root)[0];
  const builtAt = fs.statSync(built).mtimeMs;
  // Unchanged: the same file, not written again.
  nodeArgs('worker', root);
  expect(fs.statSync(built).mtimeMs).toBe(builtAt);

  say('second');
  const later = new Date(builtAt + 2000);
  fs.utimesSync(path.join(root, 'src', 'common', 'text.ts'), later, later);
  expect(run(nodeArgs('worker', root))).toBe(`second ${path.join(root, 'src', 'worker')}`);
});

it('builds again when a module it holds is gone', () => {
  const { root } = checkout();
  const built = nodeArgs('worker', root)[0];
  fs.rmSync(path.join(root, 'src', 'common', 'text.ts'));
  // The build fails on the missing module rather than running the old file.
  expect(() => nodeArgs('worker', root)).toThrow();
  expect(fs.existsSync(built)).toBe(true);
});

it("runs Dipper's own worker entry through tsx when told to", () => {
  const saved = process.env.DIPPER_BUILT_ENTRIES;
  process.env.DIPPER_BUILT_ENTRIES = 'off';
  try {
    expect(nodeArgs('worker', projectRoot)).toEqual(['--import', 'tsx', path.join(projectRoot, 'src', 'worker', 'main.ts')]);
  } finally {
    if (saved === undefined) delete process.env.DIPPER_BUILT_ENTRIES;
    else process.env.DIPPER_BUILT_ENTRIES = saved;
  }
});
