import { buildSync } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { onOff } from '../versioning/config';

/** The processes started from one JavaScript file: each entry sits two folders down, as every module it bundles. */
export type BuiltEntry = 'worker' | 'gateway' | 'taskservice';

/**
 * The command line that starts a process's entry (`src/<which>/main.ts`):
 * `node <its JavaScript, built beside it>`. Started through tsx instead, a
 * worker spends most of its start resolving and compiling each module (about
 * 1.5-2 s on a busy 2-core machine against 1-1.2 s from the built file), and
 * that start is most of what a killed worker costs before it answers again.
 *
 * The file is rebuilt whenever any module it holds is newer than it, so it
 * never runs code older than the checkout. Packages stay outside it and load
 * from node_modules as before; `__dirname` is the entry's folder, which is
 * two folders down like every module's that uses it.
 */
export function nodeArgs(which: BuiltEntry | 'isphere/bridgeSim', root: string): string[] {
  if (which === 'isphere/bridgeSim' || !onOff(process.env, 'DIPPER_BUILT_ENTRIES', true)) return ['--import', 'tsx', path.join(root, 'src', which, 'main.ts')];
  return [builtEntry(which, root)];
}

function builtEntry(which: BuiltEntry, root: string): string {
  const source = path.join(root, 'src', which, 'main.ts');
  const out = path.join(root, 'src', which, 'main.built.js');
  const inputsFile = `${out}.inputs`;
  if (fresh(out, inputsFile, root)) return out;
  // A module changed while this build reads it is newer than the file: the next start builds again.
  const startedAt = new Date();
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [source],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    metafile: true,
    write: false,
    logLevel: 'silent',
    outfile: out,
  });
  const inputs = Object.keys(result.metafile!.inputs);
  // Through a file of its own and a rename: stacks starting side by side never run a half-written file.
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, result.outputFiles[0].contents);
  fs.writeFileSync(`${inputsFile}.${process.pid}.tmp`, JSON.stringify(inputs));
  fs.renameSync(`${inputsFile}.${process.pid}.tmp`, inputsFile);
  fs.utimesSync(tmp, startedAt, startedAt);
  fs.renameSync(tmp, out);
  return out;
}

/** Built after every module it holds was last changed (a module gone counts as changed). */
function fresh(out: string, inputsFile: string, root: string): boolean {
  try {
    const builtAt = fs.statSync(out).mtimeMs;
    const inputs = JSON.parse(fs.readFileSync(inputsFile, 'utf8')) as string[];
    return inputs.every((file) => fs.statSync(path.join(root, file)).mtimeMs < builtAt);
  } catch {
    return false;
  }
}
