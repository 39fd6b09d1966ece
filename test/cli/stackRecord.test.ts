import fs from 'node:fs';
import path from 'node:path';
import { loadStackConfig, newStackRecord, readLiveStack, removeOwnStackRecord, writeStackRecord } from '../../src/cli/stackRecord';
import { loadConfig } from '../../src/config';
import { testDataRoot } from '../setup/env';

const dir = path.join(testDataRoot, 'stack-record');
const file = path.join(dir, 'stack.json');
const config = loadConfig({
  DIPPER_DATA_DIR: path.join(dir, 'data'),
  DIPPER_STACK_FILE: file,
  DIPPER_PORT: '9710',
  DIPPER_TEMPORAL_DEV_PORT: '9233',
  TEMPORAL_NAMESPACE: 'team',
});

describe('the stack record', () => {
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives other commands the running stack\'s settings, under any set explicitly', () => {
    writeStackRecord(file, newStackRecord(config, 'http://127.0.0.1:9234'));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    const seen = loadStackConfig({ DIPPER_STACK_FILE: file });
    expect(seen.dataDir).toBe(config.dataDir);
    expect(seen.publicUrl).toBe('http://127.0.0.1:9710');
    expect(seen.temporal).toMatchObject({ address: '127.0.0.1:9233', namespace: 'team' });
    expect(loadStackConfig({ DIPPER_STACK_FILE: file, DIPPER_PORT: '9999' }).port).toBe(9999);
  });

  it('is ignored once its supervisor is gone, or when its pid now names another process', () => {
    writeStackRecord(file, { ...newStackRecord(config, null), pid: 2 ** 22 + 1 });
    expect(readLiveStack(file)).toBeUndefined();
    writeStackRecord(file, { ...newStackRecord(config, null), pidStart: '1' });
    expect(readLiveStack(file)).toBeUndefined();
    expect(loadStackConfig({ DIPPER_STACK_FILE: file }).port).toBe(8710);
  });

  it('is removed only by the process it names', () => {
    writeStackRecord(file, { ...newStackRecord(config, null), pid: process.ppid });
    removeOwnStackRecord(file);
    expect(fs.existsSync(file)).toBe(true);
    writeStackRecord(file, newStackRecord(config, null));
    removeOwnStackRecord(file);
    expect(fs.existsSync(file)).toBe(false);
  });
});
