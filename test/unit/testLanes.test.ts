import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../support/processes';

// A plain CommonJS module jest loads as its sequencer (jest.config.js).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Lanes = require('../setup/lanes.js') as { new (): { shard(tests: unknown[], o: { shardIndex: number; shardCount: number }): { path: string }[] }; SECOND_LANE: Record<string, number> };

/** `npm test`'s two lanes (test/setup/lanes.js): every file runs in exactly one, and the second lane's list names real files. */
describe('the test lanes', () => {
  const files = (dir: string): string[] =>
    fs.readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.test.ts') ? [path.join(dir, e.name)] : []));
  const all = files('test');
  const tests = all.map((f) => ({ path: path.join(projectRoot, f), context: { config: { rootDir: projectRoot } } }));
  const lane = (shardIndex: number) => new Lanes().shard(tests, { shardIndex, shardCount: 2 }).map((t) => path.relative(projectRoot, t.path));

  it('puts every test file in one lane and one only', () => {
    const [first, second] = [lane(1), lane(2)];
    expect(new Set([...first, ...second]).size).toBe(all.length);
    expect(first.length + second.length).toBe(all.length);
    expect(second.sort()).toEqual(Object.keys(Lanes.SECOND_LANE).sort());
  });

  it('names only files that exist, so a renamed file does not leave its lane quietly', () => {
    for (const file of Object.keys(Lanes.SECOND_LANE)) expect(all).toContain(file);
  });
});
