import path from 'node:path';

/** The checkout this CLI belongs to, wherever it is run from. */
export const projectRoot = path.resolve(__dirname, '..', '..');

/** A dev tool from this checkout's node_modules; never fetched by npx at run time. */
export function localBin(name: string): string {
  return path.join(projectRoot, 'node_modules', '.bin', name);
}
