import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clusterSecrets } from '../../src/cluster/secrets';

/** A cluster's secrets survive its restarts, and the operator's own (variables, secret files) win. */
describe("a cluster's secrets", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-cluster-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are generated once, kept private, and the same at every later start', () => {
    const first = clusterSecrets(dir, {});
    expect(first.secrets.operatorToken).toMatch(/^dpo_cluster_/);
    expect(first.from.tokenSecret).toBe(`${path.join(dir, 'secrets.json')} (generated)`);
    expect(fs.statSync(path.join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    const again = clusterSecrets(dir, {});
    expect(again.secrets).toEqual(first.secrets);
    expect(again.from.operatorToken).toBe(path.join(dir, 'secrets.json'));
  });

  it('take a variable first, then a file its _FILE variable names, and say which', () => {
    const file = path.join(dir, 'token-secret');
    fs.writeFileSync(file, 'from-a-file\n');
    const { secrets, from } = clusterSecrets(dir, { DIPPER_OPERATOR_TOKEN: 'dpo_mine', DIPPER_TOKEN_SECRET_FILE: file });
    expect(secrets.operatorToken).toBe('dpo_mine');
    expect(secrets.tokenSecret).toBe('from-a-file');
    expect(from).toMatchObject({ operatorToken: 'DIPPER_OPERATOR_TOKEN', tokenSecret: file });
    // The kept ones are not overwritten by what the environment said this time.
    expect(clusterSecrets(dir, {}).secrets.operatorToken).toMatch(/^dpo_cluster_/);
    expect(() => clusterSecrets(dir, { DIPPER_TASK_ADMIN_KEY_FILE: path.join(dir, 'missing') })).toThrow('DIPPER_TASK_ADMIN_KEY_FILE: cannot read');
  });
});
