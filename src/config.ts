import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { defaultLimits, WORKFLOW_TASK_TIMEOUT_MS } from './common/pure/limits';
import path from 'node:path';
import { parseDestination } from './common/destination';
import { tlsFromEnv, type TemporalTarget, type TemporalTls } from './temporal/tls';
import { onOff, versioningOf, type VersioningConfig } from './versioning/config';
import { parseBudgets, type Budgets } from './common/budgets';
import { parseNotify, type NotifyConfig } from './notify/config';

/**
 * Every setting Dipper reads, in one typed object. It is read once at an
 * entry point (CLI, worker, gateway) and passed inward; nothing below the
 * entry points reads the environment.
 */
export interface Limits {
  /** Deepest team nesting; root is depth 0. */
  maxDepth: number;
  /** depth_warning is emitted for depths above this. */
  depthWarningAbove: number;
  /** Pending (unacknowledged) messages one inbox holds. */
  inboxCap: number;
  /** Bytes of pending message content one inbox holds (it lives in workflow state). */
  inboxBytes: number;
  /** Bytes of one message's content. */
  maxContentBytes: number;
  /** Tasks in one plan. */
  maxPlanTasks: number;
  /** Seconds a terminate sentinel may stay unconsumed before the runtime is forced down. */
  terminateGraceSeconds: number;
  /** History events after which a workflow continues as new, even if Temporal has not suggested it yet. */
  continueAsNewEvents: number;
  /** Size of one team's workspace above which its leader is told (workspace_over_budget). */
  workspaceBudgetBytes: number;
  /** How often a leader's workflow measures its teams' workspaces. */
  workspaceCheckSeconds: number;
  /** Agents one run may hold, the root and terminated ones included (absent in runs started before quotas). */
  maxAgentsPerRun?: number;
  /** Direct children one leader may have, terminated ones included: their records are the leader's state (absent in older runs). */
  maxChildrenPerLeader?: number;
  /** Spawns of one run in progress at once. */
  maxConcurrentSpawns?: number;
  /** Sustained spawns per second in one run, and the burst above it. */
  spawnsPerSecond?: number;
  spawnBurst?: number;
  /** Questions (ask_user and Dipper's own) open at once in one run; absent in older runs. */
  maxOpenQuestions?: number;
  /** Watchdog pass A: seconds a child's review may wait before its leader is reminded (0: off; absent in older runs). */
  reviewWatchdogSeconds?: number;
  /** Watchdog pass B: seconds without a tool call or inbox delivery before an idle agent is nudged (0: off; absent in older runs). */
  idleWatchdogSeconds?: number;
}

/** What keeps one caller, or an outage, from taking the gateway down with it. Per gateway replica. */
export interface Guards {
  /** Longest a call waits on Temporal before it answers `unavailable` (tool error, or HTTP 503). */
  callTimeoutMs: number;
  /** Concurrent long polls per agent; a new one supersedes the oldest. */
  pollsPerAgent: number;
  /** Tool calls one agent may have in flight at once on a replica (waiting ones included); more are refused rate_limited. */
  callsPerAgent: number;
  /** Time to receive a request's headers, and the whole request (not the answer: long polls are not cut). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Token buckets: sustained requests per second and burst, per agent and for the operator token; 0 per second is no limit. */
  agentRate: Rate;
  operatorRate: Rate;
  /** Per client address, where no token's bucket applies: the console's files, webhooks, refused tokens. */
  addressRate: Rate;
  /** Load balancers whose X-Forwarded-For names the client for those limits (DIPPER_TRUSTED_PROXIES, addresses). */
  trustedProxies: string[];
}

export interface Rate {
  perSecond: number;
  burst: number;
}

export interface RuntimeChoice {
  /** `claude`: each agent a Claude Agent SDK session (src/runtime/claude), launched as a command is. */
  kind: 'none' | 'command' | 'webhook' | 'claude';
  /** For kind=command: argv; the launch payload is given as env vars and on stdin. */
  command?: string[];
  /** For kind=webhook: where the launch payload is POSTed. */
  url?: string;
  /** For kind=command: variables set for every agent of this runtime (the rest of the worker's environment is not inherited). */
  env?: Record<string, string>;
  /** For kind=command: names of the worker's variables copied to its agents, such as a model key. */
  pass_env?: string[];
  /**
   * For kind=command: the OS user agents run as instead of the worker's:
   * a name or number (every agent of the runtime shares that account), or a
   * range "first-last" (each agent gets a number of its own, so agents
   * cannot see each other's processes either). The worker must run as root.
   */
  user?: string | number;
  /** For kind=command with `user`: one more group (name or number) its agents hold, such as one that may read a tools folder. */
  group?: string | number;
  /**
   * For kind=command with `user`: where its agents may connect. Absent or
   * `{allow: [...]}`: the gateway and the listed destinations only
   * (`host:port`, `[v6]:port`, an address or a network), kept by an
   * nftables fence the worker puts up; "open" puts up no fence.
   */
  network?: 'open' | { allow?: string[] };
  /** For kind=claude: the model when a spawn names none. */
  model?: string;
  /** For kind=claude: built-in tools its agents may use (default: files and a shell); Dipper's own are always there. */
  allowed_tools?: string[];
}

export interface DipperConfig {
  dataDir: string;
  /** Where `npm start` records the stack it runs (ports, addresses, pids) for the other commands to find. */
  stackFile: string;
  skillsDir: string;
  host: string;
  port: number;
  /** How long a stopping gateway lets the calls in flight answer before it cuts them (DIPPER_DRAIN_SECONDS). */
  drainMs: number;
  /** The worker's metrics and health port (DIPPER_WORKER_METRICS_PORT, on DIPPER_HOST); none: not served. */
  workerMetricsPort: number | undefined;
  /** Base URL agents use to reach the gateway (MCP and runtime endpoints). */
  publicUrl: string;
  temporal: {
    /** host:port, or undefined to start the bundled dev server. */
    address?: string;
    /** Mutual TLS to a server that requires it (TEMPORAL_TLS_SERVER_CA_CERT_PATH, _CLIENT_CERT_PATH, _CLIENT_KEY_PATH, _SERVER_NAME: the Temporal CLI's names). */
    tls?: TemporalTls;
    namespace: string;
    taskQueue: string;
    devPort: number;
    uiPort: number;
    /**
     * How long a workflow task or a Query waits on a worker's sticky queue
     * before the server gives up on that worker. Every Query the gateway
     * sends has a deadline below this, so no Query outlives a dead worker's
     * sticky queue (see docs/decisions.md, "A Query must not outlive a dead worker").
     */
    stickyTimeoutMs: number;
    /**
     * How long a worker may hold a workflow task (DIPPER_WORKFLOW_TASK_TIMEOUT_MS),
     * given to every workflow this process starts; their children inherit
     * it. A worker killed holding a task leaves its workflow waiting this
     * long (src/common/pure/limits.ts).
     */
    workflowTaskTimeoutMs: number;
    /**
     * Workflow tasks one worker runs at once (the SDK's default, 40). They
     * share one thread; fewer leave more waiting on the server, where
     * Temporal's 10 s task timeout does not run, but in the crash soaks
     * fewer also made recovery slower (docs/reliability.md).
     */
    workflowTaskSlots: number;
    /**
     * Threads the worker runs workflow code on (the SDK's default, 1). Each
     * holds its own copy of the workflow bundle; two let a fresh worker's
     * replays use both cores of a small machine.
     */
    workflowThreads: number;
    /**
     * DIPPER_FAST_ACTIVATIONS (on): workflow threads without a watchdog
     * thread per VM call or a stack trace per promise (src/worker/workflowThreads.ts).
     */
    fastActivations: boolean;
  };
  operatorToken?: string;
  /** Named operators as JSON (src/auth/operators.ts), from DIPPER_OPERATORS or the file DIPPER_OPERATORS_FILE. */
  operators?: string;
  /** Origins a browser may call the MCP endpoints and the operator API from, besides the gateway's own. */
  allowedOrigins: string[];
  /** The Temporal Web UI's base URL, for the operator console's links (DIPPER_TEMPORAL_UI_URL); null: the console shows none. */
  temporalUiUrl: string | null;
  tokenSecret?: string;
  /**
   * Signing secrets still accepted (never used to sign) while a rotation
   * runs: set the new secret as DIPPER_TOKEN_SECRET and the old one here,
   * restart the gateways one by one, and drop it once tokens signed with it
   * have ended.
   */
  previousTokenSecrets: string[];
  tokenTtlSeconds: number;
  /** Runs are cancelled this long after they start unless a run asks otherwise (0: never); the root is warned `runDeadlineWarningSeconds` before (at most a tenth of the run's time). */
  runDeadlineSeconds: number;
  runDeadlineWarningSeconds: number;
  /** PostgreSQL for the event log and the content store (Dipper on more than one host); absent: SQLite files in the data folder. */
  databaseUrl?: string;
  /**
   * This worker's host, for Dipper on several hosts (DIPPER_HOST_ID): a
   * run is then pinned to the host whose worker claimed it, and its file
   * and process activities go to that host's queue. Unset on one host.
   */
  hostId?: string;
  /** Questions (ask_user): see README, "Questions". */
  questions: { humanGateway: boolean; reattachMs: number; progressMs: number };
  /** How often at most a gateway replica marks one agent's tool calls for its watchdog (pass B); 0: never. */
  activityMarkMs: number;
  content: {
    /** Content of a run is deleted this long after the run closed, or when Temporal purges the run if that comes first. */
    retentionMs: number;
    /** How often a worker looks for content to delete. */
    sweepMs: number;
  };
  /** Worker Versioning: the deployment and build this worker serves, and when it makes its version current. */
  versioning: VersioningConfig;
  revocation: {
    /** How often each gateway replica asks the token registry what changed. */
    refreshMs: number;
    /** A replica whose view is older than this refuses agent calls (fails closed) until it refreshes. */
    staleMs: number;
    /** How long a call met by a stale view waits for a refresh before it is refused. */
    waitMs: number;
  };
  limits: Limits;
  runtimes: { default: RuntimeChoice; bySkill: Record<string, RuntimeChoice> };
  /** Agent processes (command runtime) one worker runs at once: one worker per host makes it a per-host limit. */
  maxRuntimeProcesses: number;
  /**
   * Group numbers this host hands out to workspaces and agents when a
   * runtime runs agents as another user ("first-last"; none of them may be
   * a group of the system's own).
   */
  agentGroupIds: string;
  /** Activities made to fail on purpose (tests only; see activities/faults.ts), by name. */
  faults: Record<string, Fault>;
  guards: Guards;
  logLevel: string;
  /** Serves the `bench` surface (a no-op tool) at /mcp/bench: the gateway floor `npm run bench` measures. */
  benchSurface: boolean;
  /** Check every tool result against its published output schema (DIPPER_CHECK_OUTPUTS=1; test stacks set it). */
  checkOutputs: boolean;
  taskApi: TaskApiConfig;
  isphere: IsphereConfig;
  model: ModelProxyConfig;
  /** Where people are told that something waits for them (DIPPER_NOTIFY, src/notify). */
  notify: NotifyConfig;
}

/** Dipper's model proxy (/model), which Claude agents reach with their own tokens: the real key stays here. */
export interface ModelProxyConfig {
  /** The Messages API it forwards to (DIPPER_MODEL_UPSTREAM_URL). */
  upstreamUrl: string;
  /** The operator's key (DIPPER_MODEL_API_KEY or the file DIPPER_MODEL_API_KEY_FILE); never logged, never given to an agent. */
  apiKey?: string;
  /** Token and turn budgets per run and per skill (DIPPER_MODEL_BUDGETS, src/gateway/budgets.ts); absent: none. */
  budgets?: Budgets;
}

/** The isphere tools' sources and policy (docs/isphere.md). */
export interface IsphereConfig {
  /** The iSphere bridge (DIPPER_ISPHERE_BRIDGE_URL); absent: no bridge source. */
  bridgeUrl?: string;
  /** Sent to the bridge as a bearer token (DIPPER_ISPHERE_BRIDGE_TOKEN or the file DIPPER_ISPHERE_BRIDGE_TOKEN_FILE); never logged. */
  bridgeToken?: string;
  bridgeTimeoutMs: number;
  /** A plaintext SQLite export read by `local_readonly` (DIPPER_ISPHERE_LOCAL_STORE). */
  localStore?: string;
  /** `mock` (DIPPER_ISPHERE_CONNECTOR): seeded fixture data stands in for every source, labelled `mock`. */
  connector?: 'mock';
  /** Who may read what (DIPPER_ISPHERE_POLICY_FILE); absent: nobody reads anything. */
  policyFile?: string;
  /** Bytes of compact JSON one isphere result may take (DIPPER_ISPHERE_RESULT_BUDGET_BYTES). */
  resultBudgetBytes: number;
  /** The audit chain's HMAC key (DIPPER_AUDIT_KEY, or the file DIPPER_AUDIT_KEY_FILE); absent: derived from the token secret (src/auth/secrets.ts). */
  auditKey?: string;
  /** A file outside the data folder that holds the chain's last head, signed (DIPPER_AUDIT_WITNESS; src/common/stores/audit/witness.ts). */
  auditWitness?: string;
  /** `dry_run_only` (DIPPER_ISPHERE_SENDS): every real send is refused with DRY_RUN_ONLY; `approved`: sends under a person's approval. */
  sends: 'approved' | 'dry_run_only';
  /** How long a person has to decide an approval (DIPPER_ISPHERE_APPROVAL_TTL_SECONDS). */
  approvalSeconds: number;
  /** How long an approval stays usable once given (DIPPER_ISPHERE_APPROVAL_USE_SECONDS). */
  useSeconds: number;
  /** How long after its send an approval answers repeats before it closes (DIPPER_ISPHERE_RECEIPT_SECONDS). */
  receiptSeconds: number;
  /** How long a send whose outcome is unknown is reconciled before it is recorded `unknown` (DIPPER_ISPHERE_RECONCILE_MAX_SECONDS). */
  reconcileSeconds: number;
  /**
   * Approval systems that may decide through the webhook, by name, each with
   * its HMAC secret (DIPPER_ISPHERE_WEBHOOK_SECRETS: `name:secret,...`; a
   * name listed twice has two secrets, for rotation).
   */
  webhookSecrets: { name: string; secret: string }[];
  /** Where new approval requests are announced (DIPPER_ISPHERE_APPROVAL_NOTIFY_URL), signed with DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET. */
  notify?: { url: string; secret: string };
  /** Directories a download may write under besides the run's own `isphere/downloads` (DIPPER_ISPHERE_DOWNLOAD_DIRS, comma-separated). */
  downloadDirs: string[];
  /** Directories a sent file may come from besides the run's own `isphere/outbound` (DIPPER_ISPHERE_OUTBOUND_DIRS). */
  outboundDirs: string[];
  /** The largest file downloaded or sent (DIPPER_ISPHERE_MAX_FILE_BYTES; the bridge takes 20 MiB). */
  maxFileBytes: number;
  /** Approvals one run may have open at once (DIPPER_ISPHERE_MAX_OPEN_APPROVALS): an agent cannot flood the people who decide. */
  maxOpenApprovals: number;
}

function isphereOf(env: Env): IsphereConfig {
  const url = env.DIPPER_ISPHERE_BRIDGE_URL?.trim().replace(/\/+$/, '') || undefined;
  if (url && !/^https?:\/\//.test(url)) throw new Error(`DIPPER_ISPHERE_BRIDGE_URL must be an http(s) URL, got "${url}"`);
  const connector = env.DIPPER_ISPHERE_CONNECTOR?.trim() || undefined;
  if (connector !== undefined && connector !== 'mock') throw new Error(`DIPPER_ISPHERE_CONNECTOR can only be "mock" (or unset), got "${connector}"`);
  return {
    bridgeUrl: url,
    bridgeToken: secretOf(env, 'DIPPER_ISPHERE_BRIDGE_TOKEN'),
    bridgeTimeoutMs: Math.max(100, int(env, 'DIPPER_ISPHERE_BRIDGE_TIMEOUT_MS', 10_000)),
    localStore: env.DIPPER_ISPHERE_LOCAL_STORE || undefined,
    connector,
    policyFile: env.DIPPER_ISPHERE_POLICY_FILE || undefined,
    resultBudgetBytes: Math.max(4096, int(env, 'DIPPER_ISPHERE_RESULT_BUDGET_BYTES', 32 * 1024)),
    auditKey: secretOf(env, 'DIPPER_AUDIT_KEY'),
    auditWitness: env.DIPPER_AUDIT_WITNESS || undefined,
    sends: sendsOf(env.DIPPER_ISPHERE_SENDS),
    approvalSeconds: Math.max(1, int(env, 'DIPPER_ISPHERE_APPROVAL_TTL_SECONDS', 3600)),
    useSeconds: Math.max(1, int(env, 'DIPPER_ISPHERE_APPROVAL_USE_SECONDS', 3600)),
    receiptSeconds: Math.max(0, int(env, 'DIPPER_ISPHERE_RECEIPT_SECONDS', 600)),
    reconcileSeconds: Math.max(5, int(env, 'DIPPER_ISPHERE_RECONCILE_MAX_SECONDS', 900)),
    webhookSecrets: webhookSecretsOf(env.DIPPER_ISPHERE_WEBHOOK_SECRETS),
    notify: notifyOf(env),
    downloadDirs: dirsOf(env, 'DIPPER_ISPHERE_DOWNLOAD_DIRS'),
    outboundDirs: dirsOf(env, 'DIPPER_ISPHERE_OUTBOUND_DIRS'),
    maxFileBytes: Math.min(20 * 1024 * 1024, Math.max(1, int(env, 'DIPPER_ISPHERE_MAX_FILE_BYTES', 20 * 1024 * 1024))),
    maxOpenApprovals: Math.max(1, int(env, 'DIPPER_ISPHERE_MAX_OPEN_APPROVALS', 100)),
  };
}

function dirsOf(env: Env, name: string): string[] {
  const dirs = (env[name] ?? '').split(',').map((d) => d.trim()).filter(Boolean);
  const relative = dirs.find((d) => !path.isAbsolute(d));
  if (relative) throw new Error(`${name} must list absolute directories, got "${relative}"`);
  return dirs;
}

function webhookSecretsOf(raw: string | undefined): IsphereConfig['webhookSecrets'] {
  if (!raw?.trim()) return [];
  return raw.split(',').map((pair) => {
    const at = pair.indexOf(':');
    const name = pair.slice(0, at).trim();
    const secret = pair.slice(at + 1).trim();
    if (at < 1 || !/^[A-Za-z0-9._-]{1,64}$/.test(name) || secret.length < 16) {
      throw new Error('DIPPER_ISPHERE_WEBHOOK_SECRETS must be name:secret pairs, comma-separated, each secret at least 16 characters');
    }
    return { name, secret };
  });
}

function notifyOf(env: Env): IsphereConfig['notify'] {
  const url = env.DIPPER_ISPHERE_APPROVAL_NOTIFY_URL?.trim();
  if (!url) return undefined;
  if (!/^https?:\/\//.test(url)) throw new Error(`DIPPER_ISPHERE_APPROVAL_NOTIFY_URL must be an http(s) URL, got "${url}"`);
  const secret = env.DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET ?? '';
  if (secret.length < 16) throw new Error('DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET (at least 16 characters) is required with DIPPER_ISPHERE_APPROVAL_NOTIFY_URL');
  return { url, secret };
}

function sendsOf(raw: string | undefined): IsphereConfig['sends'] {
  const value = raw?.trim() || 'approved';
  if (value !== 'approved' && value !== 'dry_run_only') throw new Error(`DIPPER_ISPHERE_SENDS must be "approved" or "dry_run_only", got "${value}"`);
  return value;
}

/** The Task service the `agentteam` tools call (docs/task-service.md). */
export interface TaskApiConfig {
  /** Base URL of an external Task API (DIPPER_TASK_API_URL); absent: the embedded reference service on `servicePort`. */
  url?: string;
  /** Port of the embedded reference service (DIPPER_TASK_SERVICE_PORT; default: the gateway's port + 2). */
  servicePort: number;
  /** The workspace every agent of this deployment works in (DIPPER_TASK_WORKSPACE). */
  workspace: string;
  /** Key of the token routes (DIPPER_TASK_ADMIN_KEY); absent: derived from the token secret (src/auth/secrets.ts). */
  adminKey?: string;
  /** Bytes of compact JSON one task tool result may take (DIPPER_TASK_RESULT_BUDGET_BYTES). */
  resultBudgetBytes: number;
  /** Longest one Task API request may take (DIPPER_TASK_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
}

/** The Task API's base URL: the external one, or the embedded service's. */
export function taskApiUrl(config: DipperConfig): string {
  return config.taskApi.url ?? `http://127.0.0.1:${config.taskApi.servicePort}`;
}

function taskApiOf(env: Env, gatewayPort: number): TaskApiConfig {
  const workspace = env.DIPPER_TASK_WORKSPACE ?? 'dipper';
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(workspace)) throw new Error(`DIPPER_TASK_WORKSPACE must be 1-64 letters, digits, '.', '_' or '-', got "${workspace}"`);
  const url = env.DIPPER_TASK_API_URL?.trim().replace(/\/+$/, '') || undefined;
  if (url && !/^https?:\/\//.test(url)) throw new Error(`DIPPER_TASK_API_URL must be an http(s) URL, got "${url}"`);
  return {
    url,
    servicePort: int(env, 'DIPPER_TASK_SERVICE_PORT', gatewayPort + 2),
    workspace,
    adminKey: secretOf(env, 'DIPPER_TASK_ADMIN_KEY'),
    resultBudgetBytes: Math.max(4096, int(env, 'DIPPER_TASK_RESULT_BUDGET_BYTES', 32 * 1024)),
    requestTimeoutMs: Math.max(500, int(env, 'DIPPER_TASK_REQUEST_TIMEOUT_MS', 10_000)),
  };
}

export { defaultLimits };

type Env = Record<string, string | undefined>;

/** Names with a '/' are kept for queues Dipper derives from this one (the token registry's), so none can be another deployment's main queue. */
function taskQueueOf(env: Env): string {
  const queue = env.DIPPER_TASK_QUEUE ?? 'dipper';
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(queue)) throw new Error(`DIPPER_TASK_QUEUE must be 1-200 letters, digits, '.', '_' or '-', got "${queue}"`);
  return queue;
}

function hostIdOf(env: Env): string | undefined {
  const id = env.DIPPER_HOST_ID;
  if (!id) return undefined;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(id)) throw new Error(`DIPPER_HOST_ID must be 1-64 letters, digits, '.', '_' or '-', got "${id}"`);
  return id;
}

/** Only http(s): the console puts it in links, and a `javascript:` URL there would run in the console's page. */
function temporalUiUrlOf(env: Env): string | null {
  const raw = env.DIPPER_TEMPORAL_UI_URL?.trim();
  if (!raw) return null;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !['http:', 'https:'].includes(url.protocol)) throw new Error(`DIPPER_TEMPORAL_UI_URL must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/**
 * A secret from its variable, or from the file `<name>_FILE` names (a
 * Docker or systemd secret, a mounted Kubernetes one), trimmed. A file
 * named but unreadable or empty stops the start: a process must never
 * come up with a secret other than the operator's.
 */
export function secretOf(env: Env, name: string): string | undefined {
  if (env[name]) return env[name];
  const file = env[`${name}_FILE`];
  if (!file) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Error(`${name}_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (text === '') throw new Error(`${name}_FILE: ${file} is empty`);
  return text;
}

function int(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return n;
}

function parseRuntimes(env: Env, cwd: string): DipperConfig['runtimes'] {
  const raw = env.DIPPER_RUNTIMES;
  if (!raw) return { default: { kind: 'none' }, bySkill: {} };
  let parsed: { default?: RuntimeChoice; skills?: Record<string, RuntimeChoice> };
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('DIPPER_RUNTIMES must be JSON: {"default": {...}, "skills": {"name": {...}}}');
  }
  const runtimes = { default: parsed.default ?? { kind: 'none' as const }, bySkill: parsed.skills ?? {} };
  for (const [where, choice] of [['default', runtimes.default], ...Object.entries(runtimes.bySkill)] as [string, RuntimeChoice][]) {
    checkRuntime(where, choice);
    if (Array.isArray(choice.command)) choice.command = choice.command.map((arg) => fromStartDir(arg, cwd));
  }
  return runtimes;
}

/**
 * A command runs in its agent's workspace, but its words were written where
 * Dipper was started: a relative path there (`bin/reference-runtime.js`)
 * that names a file is made absolute, so it means what its writer meant.
 */
function fromStartDir(arg: string, cwd: string): string {
  if (typeof arg !== 'string' || path.isAbsolute(arg) || !arg.includes('/') || arg.startsWith('-')) return arg;
  const full = path.resolve(cwd, arg);
  return existsSync(full) ? full : arg;
}

/**
 * Dipper's own secrets and its Temporal connection: never handed to an
 * agent, whatever a runtime's `env` or `pass_env` says.
 */
export const NEVER_PASSED = /^(DIPPER_TOKEN_SECRET|DIPPER_OPERATOR_TOKEN|DIPPER_OPERATORS|DIPPER_TASK_ADMIN_KEY|DIPPER_AUDIT_KEY|DIPPER_AUDIT_WITNESS|DIPPER_ISPHERE_BRIDGE_TOKEN|DIPPER_ISPHERE_SIM_CONTROL_TOKEN|DIPPER_ISPHERE_WEBHOOK_SECRETS|DIPPER_ISPHERE_APPROVAL_NOTIFY_SECRET|DIPPER_MODEL_API_KEY|TEMPORAL_)/;

/** A runtime that would hand an agent Dipper's own secrets, or a malformed one, stops the process at start. */
function checkRuntime(where: string, choice: RuntimeChoice): void {
  const names = [...Object.keys(choice.env ?? {}), ...(choice.pass_env ?? [])];
  if (choice.pass_env !== undefined && !(Array.isArray(choice.pass_env) && choice.pass_env.every((n) => typeof n === 'string'))) {
    throw new Error(`DIPPER_RUNTIMES ${where}: pass_env must be a list of variable names`);
  }
  if (choice.env !== undefined && !Object.values(choice.env).every((v) => typeof v === 'string')) {
    throw new Error(`DIPPER_RUNTIMES ${where}: env values must be strings`);
  }
  const secret = names.find((n) => NEVER_PASSED.test(n));
  if (secret) throw new Error(`DIPPER_RUNTIMES ${where}: ${secret} is Dipper's own and is never given to agents`);
  if (choice.kind === 'claude') checkClaude(where, choice, names);
  const account = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0) || (typeof v === 'string' && /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(v));
  if (choice.user !== undefined || choice.group !== undefined) {
    if (choice.kind !== 'command' && choice.kind !== 'claude') throw new Error(`DIPPER_RUNTIMES ${where}: user and group apply to kinds "command" and "claude" only`);
    if (!account(choice.user) && !(typeof choice.user === 'string' && /^\d+-\d+$/.test(choice.user))) {
      throw new Error(`DIPPER_RUNTIMES ${where}: user must be a user name, a number above 0 or a range "first-last" (and is required with group)`);
    }
    if (choice.group !== undefined && !account(choice.group)) throw new Error(`DIPPER_RUNTIMES ${where}: group must be a group name or a number above 0`);
    if (choice.user === 'root' || choice.user === 0 || choice.user === '0') throw new Error(`DIPPER_RUNTIMES ${where}: user must not be root`);
  }
  if (choice.network !== undefined) checkNetwork(where, choice);
}

/** A Claude agent reaches its model through Dipper's proxy only: no model key or endpoint of its own. */
function checkClaude(where: string, choice: RuntimeChoice, names: string[]): void {
  const modelVar = names.find((n) => MODEL_VARIABLES.test(n));
  if (modelVar) throw new Error(`DIPPER_RUNTIMES ${where}: ${modelVar} is not given to claude agents: they reach the model through Dipper's proxy (DIPPER_MODEL_API_KEY)`);
  if (choice.model !== undefined && (typeof choice.model !== 'string' || choice.model === '')) throw new Error(`DIPPER_RUNTIMES ${where}: model must be a model name`);
  const tools = choice.allowed_tools;
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((t) => typeof t === 'string' && /^[A-Za-z][\w()*:. -]*$/.test(t)))) {
    throw new Error(`DIPPER_RUNTIMES ${where}: allowed_tools must be a list of tool names`);
  }
}

/** Variables that would point a Claude agent's CLI at a model on its own terms. */
const MODEL_VARIABLES = /^(ANTHROPIC_|CLAUDE_CODE_OAUTH_TOKEN$|CLAUDE_CODE_USE_|AWS_BEARER_TOKEN_BEDROCK$)/;

function checkNetwork(where: string, choice: RuntimeChoice): void {
  if (choice.user === undefined) throw new Error(`DIPPER_RUNTIMES ${where}: network applies to a runtime with user (agents that run as the worker cannot be fenced)`);
  if (choice.network === 'open') return;
  const allow = typeof choice.network === 'object' && choice.network !== null ? choice.network.allow : null;
  if (!Array.isArray(allow ?? []) || Object.keys(choice.network ?? {}).some((k) => k !== 'allow')) {
    throw new Error(`DIPPER_RUNTIMES ${where}: network must be "open" or {"allow": ["host:port", ...]}`);
  }
  const bad = (allow ?? []).find((d) => typeof d !== 'string' || !parseDestination(d));
  if (bad !== undefined) throw new Error(`DIPPER_RUNTIMES ${where}: network.allow entry ${JSON.stringify(bad)} is not host:port, [v6]:port, an address or a network`);
}

/**
 * Group numbers a data folder hands out when DIPPER_AGENT_GROUP_IDS is not
 * set: a block of 100,000 of 2000000000-2099999999 that its path picks, so
 * two data folders on one host do not hand the same number to two
 * workspaces (an agent holding one would hold the other).
 */
export function defaultGroupIds(dataDir: string): string {
  const block = createHash('sha256').update(path.resolve(dataDir)).digest().readUInt32BE(0) % 1000;
  const first = 2_000_000_000 + block * 100_000;
  return `${first}-${first + 99_999}`;
}

/** The runtime that launches an agent of `skill`: its own, or the default (a skill named like an Object method included). */
export function runtimeFor(runtimes: DipperConfig['runtimes'], skill: string): RuntimeChoice {
  return (Object.hasOwn(runtimes.bySkill, skill) ? runtimes.bySkill[skill] : undefined) ?? runtimes.default;
}

/** Whether any runtime runs its agents as another OS user: workspaces then get groups of their own. */
export function isolatesAgents(runtimes: DipperConfig['runtimes']): boolean {
  return [runtimes.default, ...Object.values(runtimes.bySkill)].some((c) => c.user !== undefined);
}

/** `name` or `name:probability`, comma-separated; an unknown activity name is the caller's to check. */
/** An injected failure: each call fails with `probability`, once the first `after` calls have passed. */
export interface Fault {
  probability: number;
  after: number;
}

/** `name`, `name:probability`, `name>after` or `name:probability>after`, comma-separated. */
function parseFaults(text: string | undefined): Record<string, Fault> {
  const faults: Record<string, Fault> = {};
  for (const part of (text ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Za-z]+)(?::([0-9.]+))?(?:>(\d+))?$/.exec(part);
    const probability = m?.[2] === undefined ? 1 : Number(m[2]);
    if (!m || !(probability >= 0 && probability <= 1)) {
      throw new Error(`DIPPER_FAULTS: "${part}" must be an activity name, then optionally ":probability" (0 to 1) and ">calls that pass first"`);
    }
    faults[m[1]] = { probability, after: Number(m[3] ?? 0) };
  }
  return faults;
}

function loadGuards(env: Env): Guards {
  const requestTimeoutMs = Math.max(1000, int(env, 'DIPPER_REQUEST_TIMEOUT_MS', 30_000));
  const rate = (prefix: string, perSecond: number, burst: number): Rate => ({
    perSecond: int(env, `${prefix}_PER_SECOND`, perSecond),
    burst: Math.max(1, int(env, `${prefix}_BURST`, burst)),
  });
  return {
    callTimeoutMs: Math.max(100, int(env, 'DIPPER_CALL_TIMEOUT_MS', 15_000)),
    pollsPerAgent: Math.max(1, int(env, 'DIPPER_POLLS_PER_AGENT', 1)),
    callsPerAgent: Math.max(1, int(env, 'DIPPER_CALLS_PER_AGENT', 64)),
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeoutMs: Math.min(requestTimeoutMs, Math.max(1000, int(env, 'DIPPER_HEADERS_TIMEOUT_MS', 10_000))),
    requestTimeoutMs,
    agentRate: rate('DIPPER_RATE', 50, 100),
    operatorRate: rate('DIPPER_OPERATOR_RATE', 200, 400),
    addressRate: rate('DIPPER_ADDRESS_RATE', 50, 200),
    trustedProxies: (env.DIPPER_TRUSTED_PROXIES ?? '').split(',').map((a) => a.trim()).filter(Boolean),
  };
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): DipperConfig {
  const dataDir = path.resolve(cwd, env.DIPPER_DATA_DIR ?? '.dipper');
  const host = env.DIPPER_HOST ?? '127.0.0.1';
  const port = int(env, 'DIPPER_PORT', 8710);
  const devPort = int(env, 'DIPPER_TEMPORAL_DEV_PORT', 7233);
  const faults = parseFaults(env.DIPPER_FAULTS);
  return {
    dataDir,
    stackFile: path.resolve(cwd, env.DIPPER_STACK_FILE ?? '.dipper/stack.json'),
    skillsDir: path.resolve(cwd, env.DIPPER_SKILLS_DIR ?? 'skills'),
    host,
    port,
    workerMetricsPort: env.DIPPER_WORKER_METRICS_PORT ? int(env, 'DIPPER_WORKER_METRICS_PORT', 0) : undefined,
    drainMs: int(env, 'DIPPER_DRAIN_SECONDS', 10) * 1000,
    publicUrl: (env.DIPPER_PUBLIC_URL ?? `http://${host}:${port}`).replace(/\/$/, ''),
    temporal: {
      address: env.TEMPORAL_ADDRESS || undefined,
      tls: tlsFromEnv(env),
      namespace: env.TEMPORAL_NAMESPACE ?? 'dipper',
      taskQueue: taskQueueOf(env),
      devPort,
      uiPort: int(env, 'DIPPER_TEMPORAL_UI_PORT', devPort + 1000),
      stickyTimeoutMs: Math.max(1000, int(env, 'DIPPER_STICKY_TIMEOUT_MS', 2000)),
      workflowTaskTimeoutMs: Math.max(1000, int(env, 'DIPPER_WORKFLOW_TASK_TIMEOUT_MS', WORKFLOW_TASK_TIMEOUT_MS)),
      workflowTaskSlots: Math.max(2, int(env, 'DIPPER_WORKFLOW_TASK_SLOTS', 40)),
      workflowThreads: Math.max(1, int(env, 'DIPPER_WORKFLOW_THREADS', 1)),
      fastActivations: onOff(env, 'DIPPER_FAST_ACTIVATIONS', true),
    },
    operatorToken: secretOf(env, 'DIPPER_OPERATOR_TOKEN'),
    operators: env.DIPPER_OPERATORS || (env.DIPPER_OPERATORS_FILE ? readFileSync(env.DIPPER_OPERATORS_FILE, 'utf8') : undefined),
    allowedOrigins: (env.DIPPER_ALLOWED_ORIGINS ?? '').split(',').map((x) => x.trim().replace(/\/+$/, '')).filter(Boolean),
    temporalUiUrl: temporalUiUrlOf(env),
    tokenSecret: secretOf(env, 'DIPPER_TOKEN_SECRET'),
    previousTokenSecrets: (env.DIPPER_TOKEN_SECRET_PREVIOUS ?? '').split(',').map((x) => x.trim()).filter(Boolean),
    databaseUrl: secretOf(env, 'DIPPER_DATABASE_URL'),
    hostId: hostIdOf(env),
    questions: {
      humanGateway: !['0', 'off', 'false', 'no'].includes((env.DIPPER_HUMAN_GATEWAY ?? '').toLowerCase()),
      reattachMs: int(env, 'DIPPER_QUESTION_REATTACH_SECONDS', 600) * 1000,
      progressMs: Math.max(100, int(env, 'DIPPER_QUESTION_PROGRESS_MS', 10_000)),
    },
    content: {
      retentionMs: int(env, 'DIPPER_CONTENT_RETENTION_HOURS', 72) * 3600 * 1000,
      sweepMs: Math.max(1000, int(env, 'DIPPER_CONTENT_SWEEP_SECONDS', 3600) * 1000),
    },
    versioning: versioningOf(env, taskQueueOf(env)),
    revocation: {
      refreshMs: Math.max(50, int(env, 'DIPPER_REVOCATION_REFRESH_MS', 250)),
      staleMs: Math.max(500, int(env, 'DIPPER_REVOCATION_STALE_MS', 3000)),
      waitMs: Math.max(0, int(env, 'DIPPER_REVOCATION_WAIT_MS', 2000)),
    },
    activityMarkMs: Math.max(0, int(env, 'DIPPER_ACTIVITY_MARK_MS', 15_000)),
    tokenTtlSeconds: int(env, 'DIPPER_TOKEN_TTL_SECONDS', 30 * 24 * 3600),
    runDeadlineSeconds: int(env, 'DIPPER_RUN_DEADLINE_SECONDS', 24 * 3600),
    runDeadlineWarningSeconds: int(env, 'DIPPER_RUN_DEADLINE_WARNING_SECONDS', 600),
    limits: {
      maxDepth: int(env, 'DIPPER_MAX_DEPTH', defaultLimits.maxDepth),
      depthWarningAbove: int(env, 'DIPPER_DEPTH_WARNING_ABOVE', defaultLimits.depthWarningAbove),
      inboxCap: int(env, 'DIPPER_INBOX_CAP', defaultLimits.inboxCap),
      inboxBytes: int(env, 'DIPPER_INBOX_BYTES', defaultLimits.inboxBytes),
      maxContentBytes: int(env, 'DIPPER_MAX_CONTENT_BYTES', defaultLimits.maxContentBytes),
      maxPlanTasks: int(env, 'DIPPER_MAX_PLAN_TASKS', defaultLimits.maxPlanTasks),
      terminateGraceSeconds: int(env, 'DIPPER_TERMINATE_GRACE_SECONDS', defaultLimits.terminateGraceSeconds),
      continueAsNewEvents: int(env, 'DIPPER_CONTINUE_AS_NEW_EVENTS', defaultLimits.continueAsNewEvents),
      workspaceBudgetBytes: int(env, 'DIPPER_WORKSPACE_BUDGET_BYTES', defaultLimits.workspaceBudgetBytes),
      workspaceCheckSeconds: int(env, 'DIPPER_WORKSPACE_CHECK_SECONDS', defaultLimits.workspaceCheckSeconds),
      maxAgentsPerRun: Math.max(1, int(env, 'DIPPER_MAX_AGENTS_PER_RUN', defaultLimits.maxAgentsPerRun!)),
      maxChildrenPerLeader: Math.max(1, int(env, 'DIPPER_MAX_CHILDREN_PER_LEADER', defaultLimits.maxChildrenPerLeader!)),
      maxConcurrentSpawns: Math.max(1, int(env, 'DIPPER_MAX_CONCURRENT_SPAWNS', defaultLimits.maxConcurrentSpawns!)),
      spawnsPerSecond: int(env, 'DIPPER_SPAWNS_PER_SECOND', defaultLimits.spawnsPerSecond!),
      spawnBurst: Math.max(1, int(env, 'DIPPER_SPAWN_BURST', defaultLimits.spawnBurst!)),
      maxOpenQuestions: Math.max(1, int(env, 'DIPPER_MAX_OPEN_QUESTIONS', defaultLimits.maxOpenQuestions!)),
      reviewWatchdogSeconds: Math.max(0, int(env, 'DIPPER_WATCHDOG_REVIEW_SECONDS', defaultLimits.reviewWatchdogSeconds!)),
      idleWatchdogSeconds: Math.max(0, int(env, 'DIPPER_WATCHDOG_IDLE_SECONDS', defaultLimits.idleWatchdogSeconds!)),
    },
    maxRuntimeProcesses: Math.max(1, int(env, 'DIPPER_MAX_RUNTIME_PROCESSES', 200)),
    agentGroupIds: env.DIPPER_AGENT_GROUP_IDS ?? defaultGroupIds(dataDir),
    faults,
    runtimes: parseRuntimes(env, cwd),
    guards: loadGuards(env),
    logLevel: env.DIPPER_LOG_LEVEL ?? 'info',
    benchSurface: env.DIPPER_BENCH_SURFACE === '1',
    checkOutputs: env.DIPPER_CHECK_OUTPUTS === '1',
    taskApi: taskApiOf(env, port),
    isphere: isphereOf(env),
    notify: parseNotify(env.DIPPER_NOTIFY),
    model: {
      upstreamUrl: (env.DIPPER_MODEL_UPSTREAM_URL || 'https://api.anthropic.com').replace(/\/+$/, ''),
      apiKey: secretOf(env, 'DIPPER_MODEL_API_KEY'),
      budgets: parseBudgets(env.DIPPER_MODEL_BUDGETS),
    },
  };
}

/** The Temporal frontend address in use: the configured one or the bundled dev server. */
export function temporalAddress(config: DipperConfig): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devPort}`;
}

/** The server and how to speak to it: TLS only toward a server Dipper did not start (the dev server speaks plain gRPC on loopback). */
export function temporalTarget(config: DipperConfig): TemporalTarget {
  return { address: temporalAddress(config), ...(config.temporal.address && config.temporal.tls ? { tls: config.temporal.tls } : {}) };
}
