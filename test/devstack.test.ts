import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { devServerArgs, loadTemporalDevConfig } from '../src/devstack/devConfig';
import { mcpClientConfig } from '../src/cli/startRun';
import { TEMPORAL_SERVER_VERSION } from '../src/common/version';
import { clusterEnvs } from '../src/cluster/cluster';
import { temporalCliPath } from '../src/devstack/temporalCli';

// js-yaml arrives with eslint rather than as a dependency of ours, and ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const yaml = require('js-yaml') as { load(text: string): unknown };

const root = path.resolve(__dirname, '..');
const devConfig = loadTemporalDevConfig(root);
const dipperAttributes = ['DipperRunId', 'DipperAgentId', 'DipperRole', 'DipperLeaderId', 'DipperStatus', 'DipperAttention'];

/** Every value that follows `flag` in argv. */
function flagValues(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));
}

describe('temporal-config/dev-server.json', () => {
  it('registers the six Dipper search attributes, all Keyword', () => {
    expect(Object.keys(devConfig.searchAttributes).sort()).toEqual([...dipperAttributes].sort());
    expect(new Set(Object.values(devConfig.searchAttributes))).toEqual(new Set(['Keyword']));
  });

  it('comes from a CLI whose dev server is the release dipper cluster builds', () => {
    // The CLI is installed by the jest global setup (and .ci/run) before any test runs.
    const said = execFileSync(temporalCliPath(root), ['--version'], { encoding: 'utf8' });
    expect(said).toContain(`Server ${TEMPORAL_SERVER_VERSION.slice(1)},`);
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

  it('has Temporal on PostgreSQL, its UI, the one-shot schema and setup, two workers, two gateways and a load balancer', () => {
    expect(Object.keys(services).sort()).toEqual(['gateway-1', 'gateway-2', 'lb', 'postgresql', 'tasks', 'temporal', 'temporal-schema', 'temporal-setup', 'temporal-ui', 'worker-a', 'worker-b']);
    expect(services.postgresql.image).toBe('postgres:16');
    expect(services.temporal.environment?.DB).toBe('postgres12');
    expect(services['temporal-ui'].environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(services['temporal-setup'].image).toMatch(/^temporalio\/admin-tools:/);
    // Dipper's own database is made beside Temporal's on first start.
    expect(services.postgresql.volumes).toContain('./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/dipper.sh:ro');
  });

  it('runs the Temporal release the dev server embeds and dipper cluster builds, on schemas applied before it starts', () => {
    const release = TEMPORAL_SERVER_VERSION.slice(1);
    expect(services.temporal.image).toBe(`temporalio/server:\${TEMPORAL_VERSION:-${release}}`);
    for (const oneShot of ['temporal-schema', 'temporal-setup']) expect(services[oneShot].image).toBe(`temporalio/admin-tools:\${TEMPORAL_VERSION:-${release}}`);
    expect(services.temporal.depends_on?.['temporal-schema']).toEqual({ condition: 'service_completed_successfully' });
    const script = (services['temporal-schema'].command ?? []).join('\n');
    expect(script).toContain('for pair in temporal:temporal temporal_visibility:visibility');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/$$schema/versioned');
  });

  it('gives Temporal the dynamic config in temporal-config/dynamicconfig', () => {
    const mounted = services.temporal.volumes?.find((volume) => volume.startsWith('./temporal-config/dynamicconfig:'));
    const target = mounted?.split(':')[1];
    expect(target).toBe('/etc/temporal/config/dynamicconfig');
    expect(`${target}/production.yaml`).toBe(`/etc/temporal/${services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH}`);
  });

  it.each(['worker-a', 'worker-b', 'gateway-1', 'gateway-2'])('builds %s from the Dockerfile and points it at Temporal, PostgreSQL and the load balancer', (name) => {
    const service = services[name];
    const role = name.startsWith('worker') ? 'worker' : 'gateway';
    expect(service.build).toBe('.');
    expect(service.command).toEqual(['npx', 'tsx', `src/${role}/main.ts`]);
    expect(service.environment).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'dipper',
      DIPPER_DATA_DIR: '/data',
      DIPPER_HOST: '0.0.0.0',
      DIPPER_PUBLIC_URL: expect.stringContaining('http://lb:8710'),
      DIPPER_DATABASE_URL: expect.stringMatching(/^postgres:\/\/dipper:.*@postgresql:5432\/dipper$/),
    });
    expect(Object.keys(service.environment ?? {})).toEqual(expect.arrayContaining(['DIPPER_OPERATOR_TOKEN', 'DIPPER_TOKEN_SECRET', 'DIPPER_TASK_ADMIN_KEY']));
    // Every worker and gateway reaches the one Task service: a worker's tokens and a gateway's are issued by the same server.
    expect(service.environment?.DIPPER_TASK_API_URL).toContain('http://tasks:8712');
    expect(service.depends_on?.['temporal-setup']).toEqual({ condition: 'service_completed_successfully' });
    expect(service.healthcheck?.test.length).toBeGreaterThan(1);
  });

  it('runs the reference Task service on a volume of its own, listening where the workers and gateways look', () => {
    const tasks = services.tasks;
    expect(tasks.command).toEqual(['npx', 'tsx', 'src/taskservice/main.ts']);
    expect(tasks.environment).toMatchObject({ DIPPER_TASK_SERVICE_HOST: '0.0.0.0', DIPPER_TASK_SERVICE_PORT: '8712', DIPPER_TASK_SERVICE_DB: '/data/tasks.db' });
    expect(tasks.volumes).toContain('tasks-data:/data');
  });

  it('makes each worker a host of its own: its own host id and its own disk', () => {
    const workers = ['worker-a', 'worker-b'].map((name) => services[name]);
    const hosts = workers.map((w) => w.environment?.DIPPER_HOST_ID);
    expect(new Set(hosts).size).toBe(2);
    const volumes = workers.map((w) => w.volumes?.find((v) => v.endsWith(':/data')));
    expect(new Set(volumes).size).toBe(2);
    expect(services['gateway-1'].environment?.DIPPER_HOST_ID).toBeUndefined();
  });

  it('puts HAProxy with deploy/haproxy.cfg in front of both gateways', () => {
    const lb = services.lb;
    expect(lb.image).toMatch(/^haproxy:/);
    expect(lb.volumes).toContain('./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    expect(lb.environment).toMatchObject({ DIPPER_GATEWAY_1: 'gateway-1:8710', DIPPER_GATEWAY_2: 'gateway-2:8710' });
    // Long polls wait up to 30 s: the balancer must wait longer for an answer.
    const cfg = fs.readFileSync(path.join(root, 'deploy', 'haproxy.cfg'), 'utf8');
    const serverTimeout = Number(/timeout server (\d+)s/.exec(cfg)?.[1]);
    expect(serverTimeout).toBeGreaterThan(30);
  });

  it("passes a real compose implementation's check (Debian's docker-compose), which refuses it without its secrets", () => {
    const secrets = { DIPPER_OPERATOR_TOKEN: 'dpo_x', DIPPER_TOKEN_SECRET: 'secret', DIPPER_TASK_ADMIN_KEY: 'dtk_x' };
    const composeEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };
    const checked = execFileSync('docker-compose', ['-f', 'docker-compose.yml', 'config'], { cwd: root, env: { ...composeEnv, ...secrets }, encoding: 'utf8' });
    const resolved = (yaml.load(checked) as { services: Record<string, ComposeService & { networks?: Record<string, { ipv4_address?: string }> }> }).services;
    expect(Object.keys(resolved).sort()).toEqual(Object.keys(services).sort());
    // As compose resolves it: the balancer's fixed address is the one the gateways trust, and each worker's health is its own page.
    expect(resolved.lb.networks?.default?.ipv4_address).toBe(resolved['gateway-1'].environment?.DIPPER_TRUSTED_PROXIES);
    expect(resolved['worker-a'].healthcheck?.test.join(' ')).toContain(`127.0.0.1:${resolved['worker-a'].environment?.DIPPER_WORKER_METRICS_PORT}/healthz`);
    const { DIPPER_TOKEN_SECRET: _left, ...missing } = secrets;
    let refusal = '';
    try {
      execFileSync('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q'], { cwd: root, env: { ...composeEnv, ...missing }, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      refusal = String((err as { stderr?: string }).stderr);
    }
    expect(refusal).toContain('set DIPPER_TOKEN_SECRET');
  });

  it('gives its workers and gateways the settings dipper cluster gives its own, but for what a container needs', () => {
    const envs = clusterEnvs({
      tasksUrl: 'http://127.0.0.1:29330',
      temporalAddress: '127.0.0.1:29300',
      tlsEnv: { TEMPORAL_TLS_CA: 'ca.pem', TEMPORAL_TLS_CERT: 'client.pem', TEMPORAL_TLS_KEY: 'client.key' },
      namespace: devConfig.namespace,
      databaseUrl: 'postgres://dipper:pw@127.0.0.1:5432/dipper_cluster',
      publicUrl: 'http://127.0.0.1:29320',
      secrets: { operatorToken: 'dpo_x', tokenSecret: 's', taskAdminKey: 'dtk_x' },
      bundle: '/x/workflow-bundle.js',
    });
    // Set on one side only, and why.
    const onlyCompose: Record<string, string> = {
      DIPPER_HOST: 'a container listens on its network; the cluster keeps its processes on loopback behind HAProxy',
      DIPPER_ALLOWED_ORIGINS: "browsers reach compose's published port, not the public URL agents are given (http://lb:8710)",
    };
    const onlyCluster: Record<string, string> = {
      TEMPORAL_TLS_CA: "the cluster's Temporal takes only Dipper's client certificate; compose's is reachable only on its private network",
      TEMPORAL_TLS_CERT: 'as TEMPORAL_TLS_CA',
      TEMPORAL_TLS_KEY: 'as TEMPORAL_TLS_CA',
      DIPPER_WORKFLOW_BUNDLE: 'the cluster builds the workflow bundle once for its processes; a container bundles at start',
    };
    for (const [service, own] of [
      ['worker-a', envs.worker('host-a', '/data', 8713)],
      ['gateway-1', envs.gateway(8710, '/data')],
    ] as const) {
      const compose = Object.keys(services[service].environment ?? {});
      const cluster = Object.keys({ ...envs.common, ...own });
      // Compose's settings are shared by both roles: a gateway ignores the worker's metrics port, a worker the gateway's port.
      const ignored = service.startsWith('gateway') ? ['DIPPER_WORKER_METRICS_PORT'] : ['DIPPER_PORT'];
      expect(compose.filter((k) => !cluster.includes(k) && !(k in onlyCompose) && !ignored.includes(k))).toEqual([]);
      expect(cluster.filter((k) => !compose.includes(k) && !(k in onlyCluster))).toEqual([]);
      // Where both say the same thing, they say it alike.
      expect(services[service].environment?.TEMPORAL_NAMESPACE).toBe(envs.common.TEMPORAL_NAMESPACE);
      expect(services[service].environment?.DIPPER_LOG_LEVEL).toBe(`\${DIPPER_LOG_LEVEL:-${envs.common.DIPPER_LOG_LEVEL}}`);
    }
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
  it('is an MCP client config for the three surfaces over HTTP with the agent token', () => {
    const headers = { Authorization: 'Bearer dpa_x' };
    expect(mcpClientConfig('http://127.0.0.1:8710/mcp/beidou', 'dpa_x')).toEqual({
      mcpServers: {
        beidou: { type: 'http', url: 'http://127.0.0.1:8710/mcp/beidou', headers },
        agentteam: { type: 'http', url: 'http://127.0.0.1:8710/mcp/agentteam', headers },
        isphere: { type: 'http', url: 'http://127.0.0.1:8710/mcp/isphere', headers },
      },
    });
  });
});
