import fs from 'node:fs';
import path from 'node:path';
import { devServerArgs, loadTemporalDevConfig } from '../src/devstack/devConfig';
import { mcpClientConfig } from '../src/cli/startRun';

// js-yaml arrives with eslint rather than as a dependency of ours, and ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require('js-yaml') as { load(text: string): unknown };

const root = path.resolve(__dirname, '..');
const devConfig = loadTemporalDevConfig(root);
const dipperAttributes = ['DipperRunId', 'DipperAgentId', 'DipperRole', 'DipperLeaderId', 'DipperStatus'];

/** Every value that follows `flag` in argv. */
function flagValues(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));
}

describe('temporal-config/dev-server.json', () => {
  it('registers the five Dipper search attributes, all Keyword', () => {
    expect(Object.keys(devConfig.searchAttributes).sort()).toEqual([...dipperAttributes].sort());
    expect(new Set(Object.values(devConfig.searchAttributes))).toEqual(new Set(['Keyword']));
  });

  it('names the dipper namespace', () => {
    expect(devConfig.namespace).toBe('dipper');
  });

  it('has the same dynamic config as dynamicconfig/production.yaml', () => {
    const production = yaml.load(fs.readFileSync(path.join(root, 'temporal-config/dynamicconfig/production.yaml'), 'utf8'));
    const asDev = Object.fromEntries(
      Object.entries(production as Record<string, { value: unknown }[]>).map(([key, [first]]) => [key, first.value]),
    );
    expect(asDev).toEqual(devConfig.dynamicConfig);
  });
});

describe('devServerArgs', () => {
  const base = { port: 17233, uiPort: 18233 };

  it('binds the dev server to loopback on the given ports', () => {
    const args = devServerArgs(base, devConfig);
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(flagValues(args, '--ip')).toEqual(['127.0.0.1']);
    expect(flagValues(args, '--port')).toEqual(['17233']);
    expect(flagValues(args, '--ui-port')).toEqual(['18233']);
    // Never a port the CLI picks at random and binds later.
    expect([flagValues(args, '--http-port'), flagValues(args, '--metrics-port')]).toEqual([['18234'], ['18235']]);
  });

  it('persists to a SQLite file only when given one', () => {
    expect(devServerArgs(base, devConfig)).not.toContain('--db-filename');
    expect(flagValues(devServerArgs({ ...base, dbFile: '/tmp/t.db' }, devConfig), '--db-filename')).toEqual(['/tmp/t.db']);
  });

  it('runs without the UI when headless', () => {
    const args = devServerArgs({ ...base, headless: true }, devConfig);
    expect(args).toContain('--headless');
    expect(args).not.toContain('--ui-port');
  });

  it('passes every search attribute and dynamic config value as a flag', () => {
    const args = devServerArgs(base, devConfig);
    expect(flagValues(args, '--search-attribute').sort()).toEqual(dipperAttributes.map((name) => `${name}=Keyword`).sort());
    expect(flagValues(args, '--dynamic-config-value')).toEqual(
      Object.entries(devConfig.dynamicConfig).map(([key, value]) => `${key}=${JSON.stringify(value)}`),
    );
    expect(flagValues(args, '--dynamic-config-value')).toContain('frontend.enableUpdateWorkflowExecution=true');
  });

  it('creates the namespace the caller names, else the config one', () => {
    expect(flagValues(devServerArgs(base, devConfig), '--namespace')).toEqual(['dipper']);
    expect(flagValues(devServerArgs({ ...base, namespace: 'other' }, devConfig), '--namespace')).toEqual(['other']);
  });
});

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
}

describe('docker-compose.yml', () => {
  const compose = yaml.load(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, ComposeService>;
  };
  const { services } = compose;

  it('has Temporal on PostgreSQL, its UI, the one-shot setup, the worker and the gateway', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway', 'postgresql', 'temporal', 'temporal-setup', 'temporal-ui', 'worker']);
    expect(services.postgresql.image).toBe('postgres:16');
    expect(services.temporal.environment?.DB).toBe('postgres12');
    expect(services['temporal-ui'].environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(services['temporal-setup'].image).toMatch(/^temporalio\/admin-tools:/);
  });

  it('gives Temporal the dynamic config in temporal-config/dynamicconfig', () => {
    const mounted = services.temporal.volumes?.find((volume) => volume.startsWith('./temporal-config/dynamicconfig:'));
    const target = mounted?.split(':')[1];
    expect(target).toBe('/etc/temporal/config/dynamicconfig');
    expect(`${target}/production.yaml`).toBe(`/etc/temporal/${services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH}`);
  });

  it.each(['worker', 'gateway'])('builds %s from the Dockerfile and points it at Temporal and the shared data volume', (name) => {
    const service = services[name];
    expect(service.build).toBe('.');
    expect(service.command).toEqual(['npx', 'tsx', `src/${name}/main.ts`]);
    expect(service.environment).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'dipper',
      DIPPER_DATA_DIR: '/data',
      DIPPER_HOST: '0.0.0.0',
    });
    expect(Object.keys(service.environment ?? {})).toEqual(expect.arrayContaining(['DIPPER_OPERATOR_TOKEN', 'DIPPER_TOKEN_SECRET']));
    expect(service.volumes).toContain('dipper-data:/data');
    expect(service.depends_on?.['temporal-setup']).toEqual({ condition: 'service_completed_successfully' });
    expect(service.healthcheck?.test.length).toBeGreaterThan(1);
  });

  it('creates every search attribute of dev-server.json in the setup service', () => {
    const script = (services['temporal-setup'].command ?? []).join('\n');
    for (const [name, type] of Object.entries(devConfig.searchAttributes)) {
      expect(type).toBe('Keyword'); // the script creates them all as Keyword
      expect(script).toMatch(new RegExp(`\\b${name}\\b`));
    }
  });
});

describe('mcpClientConfig', () => {
  it('is an MCP client config for the beidou server over HTTP with the agent token', () => {
    expect(mcpClientConfig('http://127.0.0.1:8710/mcp/beidou', 'dpa_x')).toEqual({
      mcpServers: {
        beidou: { type: 'http', url: 'http://127.0.0.1:8710/mcp/beidou', headers: { Authorization: 'Bearer dpa_x' } },
      },
    });
  });
});
