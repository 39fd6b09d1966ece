import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AccessPolicy } from '../../src/isphere/policy';

/** A policy file as an operator writes it, loaded as the gateway loads it. */
function policy(rules: unknown[]): AccessPolicy {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-policy-')), 'policy.json');
  fs.writeFileSync(file, JSON.stringify({ rules }));
  return AccessPolicy.load(file);
}

const p = policy([
  { skills: ['lead'], read: { contacts: ['c_1', 'c_2'] } },
  { skills: ['worker'], read: { contacts: ['c_1', 'c_2', 'c_3', 'c_5'] } },
  { skills: ['analyst'], read: { contacts: ['c_2', 'c_4'] } },
  { skills: ['analyst'], read: { contacts: ['c_5'] }, beyond_leader: true },
]);
const who = (skill: string, leaders: string[]) => ({ runId: 'run_x', skill, leaders });
const readable = (skill: string, leaders: string[]) => ['c_1', 'c_2', 'c_3', 'c_4', 'c_5'].filter((c) => p.canRead(who(skill, leaders), 'contacts', c));

it('a member reads what its own skill and every leader up to the root may read', () => {
  expect(readable('lead', [])).toEqual(['c_1', 'c_2']);
  expect(readable('worker', [])).toEqual(['c_1', 'c_2', 'c_3', 'c_5']);
  expect(readable('worker', ['lead'])).toEqual(['c_1', 'c_2']);
  expect(readable('analyst', ['worker'])).toEqual(['c_2', 'c_5']);
  // Two levels down: the root's limits still hold.
  expect(readable('analyst', ['worker', 'lead'])).toEqual(['c_2', 'c_5']);
  expect(readable('worker', ['worker', 'lead'])).toEqual(['c_1', 'c_2']);
});

it('a grant marked beyond_leader holds whatever the leaders may read; a skill with no grant reads nothing whoever leads it', () => {
  expect(readable('analyst', ['lead'])).toEqual(['c_2', 'c_5']);
  expect(readable('reviewer', [])).toEqual([]);
  expect(readable('reviewer', ['worker'])).toEqual([]);
  // Under a member whose reads go beyond its leader, its own members are held to that member, not to the root.
  expect(readable('worker', ['analyst', 'lead'])).toEqual(['c_2', 'c_5']);
});
