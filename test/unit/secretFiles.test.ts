import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';

/** Secrets from files (`<NAME>_FILE`), as Docker, systemd and Kubernetes hand them over. */
describe('secrets from files', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dipper-secret-'));
  const file = (name: string, text: string) => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, text);
    return at;
  };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('are read, trimmed, for the operator token, signing secret, database URL and Task admin key', () => {
    const config = loadConfig({
      DIPPER_OPERATOR_TOKEN_FILE: file('op', 'dpo_from_file\n'),
      DIPPER_TOKEN_SECRET_FILE: file('ts', 'secret-from-file'),
      DIPPER_DATABASE_URL_FILE: file('db', 'postgres://dipper:pw@db:5432/dipper\n'),
      DIPPER_TASK_ADMIN_KEY_FILE: file('tk', 'dtk_from_file'),
    });
    expect(config).toMatchObject({ operatorToken: 'dpo_from_file', tokenSecret: 'secret-from-file', databaseUrl: 'postgres://dipper:pw@db:5432/dipper', taskApi: { adminKey: 'dtk_from_file' } });
  });

  it('yield to the variable itself, and a file that cannot be read or is empty stops the start', () => {
    expect(loadConfig({ DIPPER_OPERATOR_TOKEN: 'dpo_var', DIPPER_OPERATOR_TOKEN_FILE: path.join(dir, 'missing') }).operatorToken).toBe('dpo_var');
    expect(() => loadConfig({ DIPPER_TOKEN_SECRET_FILE: path.join(dir, 'missing') })).toThrow('DIPPER_TOKEN_SECRET_FILE: cannot read');
    expect(() => loadConfig({ DIPPER_TOKEN_SECRET_FILE: file('empty', '\n') })).toThrow('is empty');
  });
});
