import fs from 'node:fs';
import path from 'node:path';
import { bannerLines } from '../../src/cli/banner';
import { loadConfig } from '../../src/config';
import { surfaces } from '../../src/registry';
import { projectRoot } from '../support/processes';

/**
 * A clone with nothing beside it runs every test. The specs and evidence
 * kept beside the repository are documents: what a test needs from them is
 * copied in (test/contract/, test/fixtures/histories/).
 */
const FOLDERS = ['src', 'test', 'workflows', 'activities', 'bench', 'bin'];
/** The folders kept beside the repository (specs, evidence): named once, so no line of this file is itself such a path. */
const SIBLINGS = ['shared'];
const UP = '..';
const q = `(['"\`])`;
const OUTSIDE = [
  // A join that climbs to a sibling: path.join(root, <up>, <sibling>, …)
  new RegExp(`${q}\\.\\.\\1\\s*,\\s*${q}(?:${SIBLINGS.join('|')})\\2`),
  // A literal path to a sibling: <up>/<sibling>/…, <up>/<up>/<sibling>/…
  new RegExp(`${q}(?:\\.\\.[\\\\/])+(?:${SIBLINGS.join('|')})\\b`),
  // The repository's root, then up: path.join(projectRoot, <up>, …), path.resolve(root, '<up>/x')
  /\b(?:projectRoot|repoRoot|root)\s*,\s*(['"`])\.\.(?:\1|[\\/])/,
];

/** A relative module specifier (import, export, require): it resolves from the importing file's own folder. */
const MODULE = /(\bfrom\s+|\brequire\(\s*|\bimport\(\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;

/** `line` without the module specifiers that resolve inside the repository (from src/gateway, one climb reaches src/). */
function withoutInsideModules(file: string, line: string): string {
  return line.replace(MODULE, (whole, _lead, _q, spec: string) => {
    const target = path.resolve(projectRoot, path.dirname(file), spec);
    return target.startsWith(projectRoot + path.sep) ? '' : whole;
  });
}

/** The lines of `text` that reach outside the repository, as `file:line: text`. */
function outsideReads(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (OUTSIDE.some((re) => re.test(withoutInsideModules(file, line))) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

const codeFiles = () =>
  FOLDERS.flatMap((dir) =>
    fs
      .readdirSync(path.join(projectRoot, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(ts|js|mjs|cjs)$/.test(f))
      .map((f) => path.join(dir, f)),
  );

describe('the repository reads nothing outside itself', () => {
  it(`in ${FOLDERS.join(', ')}`, () => {
    const files = codeFiles();
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => outsideReads(f, fs.readFileSync(path.join(projectRoot, f), 'utf8')))).toEqual([]);
  });

  const [sib] = SIBLINGS;
  it.each([
    // What test/registry/contract.test.ts and test/replay/evidence.test.ts read before their data moved in.
    `const readSpec = (file?: string) => (file ? fs.readFileSync(path.join(root, '${UP}', '${sib}', 'specs', file), 'utf8') : '');`,
    `const file = path.join(projectRoot, '${UP}', '${sib}', 'evidence', 'worker-kill-nondeterminism.history.json');`,
    `fs.readFileSync('${UP}/${sib}/specs/team-tool-surface.md', 'utf8')`,
    `import notes from "${UP}/${UP}/${sib}/specs/notes.json";`,
    `path.resolve(projectRoot, '${UP}/elsewhere/data.json')`,
  ])('catches %s', (line) => {
    expect(outsideReads('sample.ts', line)).toEqual([`sample.ts:1: ${line}`]);
  });

  it.each(["path.join(__dirname, '..', '..')", "import { x } from '../../src/common/x';", "path.join(projectRoot, 'test', 'contract', 'isphere.json')"])('lets %s be', (line) => {
    expect(outsideReads('sample.ts', line)).toEqual([]);
  });

  // A module path is resolved from its file: one climb from src/gateway stays in src/, three leave the repository.
  it('lets src/gateway import src/common and catches a climb out of the repository', () => {
    expect(outsideReads('src/gateway/sample.ts', `import { x } from '${UP}/${sib}/x';`)).toEqual([]);
    const out = `import { x } from '${UP}/${UP}/${UP}/${sib}/x';`;
    expect(outsideReads('src/gateway/sample.ts', out)).toEqual([`src/gateway/sample.ts:1: ${out}`]);
  });
});

/** The served surfaces whose endpoint, `<prefix>/mcp/<surface>`, `text` does not mention. */
const unnamed = (text: string, served: string[], prefix = '') => served.filter((s) => !text.includes(`${prefix}/mcp/${s}`));

describe('every served surface is announced', () => {
  const readme = fs.readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
  const config = loadConfig({}, projectRoot);
  const banner = bannerLines(config, 'dpo_sample', 'http://127.0.0.1:8233').join('\n');

  it('README.md names /mcp/<surface> for each', () => {
    expect(unnamed(readme, surfaces())).toEqual([]);
  });

  it("npm start's banner prints each endpoint", () => {
    expect(unnamed(banner, surfaces(), config.publicUrl)).toEqual([]);
  });

  it('catches a surface the README or the banner leaves out', () => {
    expect(surfaces()).toContain('isphere');
    // README.md before iSphere's endpoint was added to it.
    expect(unnamed(readme.replaceAll('/mcp/isphere', ''), surfaces())).toEqual(['isphere']);
    expect(unnamed(banner, [...surfaces(), 'chat'], config.publicUrl)).toEqual(['chat']);
  });
});
