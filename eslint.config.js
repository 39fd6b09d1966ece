// @ts-check
const js = require('@eslint/js');
const { defineConfig } = require('eslint/config');
const tseslint = require('typescript-eslint');
const globals = require('globals');
const { importX, createNodeResolver } = require('eslint-plugin-import-x');

/**
 * Workflow code runs in Temporal's deterministic sandbox and is replayed from
 * history, so it may import only the workflow SDK, other workflow modules and
 * src/common/pure/ (plain code every layer shares, held to the same rules).
 * Type-only imports are erased at compile time and are always fine (the
 * Activities interface, config types).
 */
const WORKFLOW_IMPORT_MESSAGE =
  "Workflow code is replayed deterministically: import only '@temporalio/workflow', '@temporalio/common', workflow modules and src/common/pure/. " +
  'Node built-ins and I/O belong in activities/. A type-only import (`import type`) is fine.';

/**
 * Matches any specifier that is neither relative nor one of the allowed packages: the two SDK ones, and
 * @noble/curves and @noble/hashes, plain arithmetic that checks the gateway's signature on a person's decision (src/common/pure/decisionProof.ts).
 */
const NOT_WORKFLOW_SAFE = '^(?!\\.{1,2}(/|$)|@temporalio/(workflow|common)(/|$)|@noble/(curves|hashes)(/|$))';

/**
 * Relative imports that climb out of workflows/ (to activities/ or src/, but src/common/pure/) are
 * outside code too; the climb that escapes depends on how deep the file sits.
 * @param {string | null} escape regex of a relative specifier that leaves workflows/ (or src/common/pure/) from this depth
 */
function workflowImports(escape) {
  const patterns = [{ regex: NOT_WORKFLOW_SAFE, allowTypeImports: true, message: WORKFLOW_IMPORT_MESSAGE }];
  if (escape) patterns.push({ regex: escape, allowTypeImports: true, message: WORKFLOW_IMPORT_MESSAGE });
  return ['error', { patterns }];
}

const workflowDeterminism = {
  'no-restricted-globals': [
    'error',
    ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate'].map((name) => ({
      name,
      message: "Use sleep() or condition() from '@temporalio/workflow': a workflow timer must be durable.",
    })),
    { name: 'process', message: 'Workflows must not read the environment; pass configuration in the workflow input.' },
    { name: 'Buffer', message: 'Buffer is a Node built-in, not available to workflows.' },
    { name: 'require', message: WORKFLOW_IMPORT_MESSAGE },
  ],
  'no-restricted-properties': [
    'error',
    { object: 'Math', property: 'random', message: "Use uuid4() or a value from the workflow input: workflows must be deterministic." },
    { object: 'globalThis', property: 'setTimeout', message: "Use sleep() from '@temporalio/workflow'." },
    { object: 'globalThis', property: 'setInterval', message: "Use sleep() from '@temporalio/workflow'." },
    { object: 'crypto', property: 'randomUUID', message: "Use uuid4() from '@temporalio/workflow'." },
  ],
};

/**
 * One typed path to Temporal (src/temporal): nothing else imports the client SDK, so every call goes through one
 * deadline policy, one retry policy, one error map and one counter per operation. Tests hold clients of their own.
 */
const TEMPORAL_CLIENT_MESSAGE =
  "Reach Temporal through src/temporal (Temporal, WorkflowRef, TemporalAdmin): it is Dipper's only importer of '@temporalio/client'.";

/**
 * Layers (docs/architecture.md, "Layers"): activities/ holds the worker's own steps and only the worker, which
 * registers them, imports it; what another process needs from there (a store, a client, an error, a record) lives
 * in src/common/. Type-only imports count too: a type from an activity file still ties the importer to it.
 */
const ACTIVITIES_MESSAGE = 'Only the worker (src/worker) imports activities/: what another process needs from there belongs in src/common/.';
const NO_ACTIVITIES = { regex: '^(\\.\\./)+activities(/|$)', message: ACTIVITIES_MESSAGE };
const TEMPORAL_CLIENT = { group: ['@temporalio/client', '@temporalio/client/*'], message: TEMPORAL_CLIENT_MESSAGE };

/** src/common is below every process: it imports none of the code that makes one (the gateway, the isphere tools, the worker). */
const COMMON_MESSAGE = 'src/common/ is used by every process and imports none of them: not src/gateway, src/isphere, src/registry, src/temporal or src/worker.';
/** @param {string} climb regex of the relative climb from the file's folder to src/ */
const aboveCommon = (climb) => ({ regex: `^${climb}(gateway|isphere|registry|temporal|worker)(/|$)`, message: COMMON_MESSAGE });

/** The gateway implements the registry's capabilities (src/registry/capabilities.ts) and wires them in; nothing it serves imports it back. */
const GATEWAY_MESSAGE = 'src/registry, src/isphere and src/temporal import nothing from src/gateway: a tool uses the capabilities of its ToolContext (src/registry/capabilities.ts), which the gateway implements.';
const NO_GATEWAY = { regex: '^(\\.\\./)+gateway(/|$)', message: GATEWAY_MESSAGE };

/** @param {...object} patterns the import patterns refused in these files (a later block replaces the whole list) */
const restrictedImports = (...patterns) => ['error', { patterns }];

/** Starting a workflow, or sending it an Update, by a type name in a string: name it by its function or definition. */
const BY_NAME_MESSAGE =
  'Name workflows by their function and Signals, Updates and Queries by their define*() definitions, never by a string: a rename must be a compile error.';
const STARTS = 'start|execute|signalWithStart|startChild|executeChild|executeUpdate|startUpdate|executeUpdateWithStart|startUpdateWithStart';
/** Query and Signal names are lower camel case; SQL clients also have a `query` method, whose text never is. */
const MESSAGE_NAME = '/^[a-z][A-Za-z0-9_]*$/';
/** A string or template as the call's first argument (esquery's regex matches strings only, not `false` or `1`). */
const STRING_FIRST = ':matches([arguments.0.type="TemplateLiteral"], [arguments.0.value=/^/])';
const byName = [
  'error',
  // startChild and executeChild are the workflow SDK's own functions; a bare `start(...)` is some local helper.
  { selector: `CallExpression[callee.name=/^(startChild|executeChild)$/]${STRING_FIRST}`, message: BY_NAME_MESSAGE },
  { selector: `CallExpression[callee.property.name=/^(${STARTS})$/]${STRING_FIRST}`, message: BY_NAME_MESSAGE },
  { selector: `CallExpression[callee.property.name=/^(query|signal)$/][arguments.0.type='Literal'][arguments.0.value=${MESSAGE_NAME}]`, message: BY_NAME_MESSAGE },
  // workflowInfo().workflowType === 'someWorkflow': compare with the function's name (someWorkflow.name).
  { selector: "BinaryExpression[operator=/^[!=]==?$/][left.property.name='workflowType'][right.type='Literal']", message: BY_NAME_MESSAGE },
  { selector: "BinaryExpression[operator=/^[!=]==?$/][right.property.name='workflowType'][left.type='Literal']", message: BY_NAME_MESSAGE },
];

/**
 * Layers (docs/architecture.md, "Layers"): each imports only from its own layer and those below it, type-only imports
 * included. What two layers share lives in the lower one, most often src/common/.
 */
const LAYERS = [
  {
    name: 'the bottom layer',
    paths: ['src/config.ts', 'src/log.ts', 'src/paths.ts', 'src/private.ts', 'src/skills.ts', 'src/common', 'src/auth', 'src/temporal', 'src/metrics', 'src/notify', 'src/versioning'],
  },
  { name: 'workflows and activities', paths: ['workflows', 'activities'] },
  {
    name: 'the services',
    paths: ['src/registry', 'src/gateway', 'src/isphere', 'src/console', 'src/worker', 'src/taskservice', 'src/runtime', 'src/model', 'src/client', 'src/ops'],
  },
  { name: 'the commands', paths: ['src/cli', 'src/cluster', 'src/soak', 'src/devstack', 'bench'] },
];
const layerZones = LAYERS.slice(0, -1).map((layer, i) => ({
  target: layer.paths,
  from: LAYERS.slice(i + 1).flatMap((above) => above.paths),
  message: `This is ${layer.name}, which imports nothing from a layer above it (docs/architecture.md, "Layers"): move what both use down, most often to src/common/.`,
}));
/** src/cli is the command line's entry: it starts everything and nothing imports it (cluster, soak and bench share src/devstack/ with it). */
const CLI_ZONE = {
  target: LAYERS.flatMap((layer) => layer.paths).filter((p) => p !== 'src/cli'),
  from: ['src/cli'],
  message: 'Nothing imports src/cli, the entry of the command line: what it shares belongs in src/devstack/ or lower.',
};
/** @param {object[]} zones */
const restrictedPaths = (zones) => ['error', { basePath: __dirname, zones }];
const layers = [
  {
    files: ['{src,workflows,activities,bench}/**/*.{ts,js,cjs}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts', '.js', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.cjs', '.json'] })],
    },
    rules: { 'import-x/no-restricted-paths': restrictedPaths([...layerZones, CLI_ZONE]) },
  },
  // A cycle among workflow modules makes what a module sees at load depend on which was loaded first.
  { files: ['workflows/**/*.ts', 'src/common/pure/*.ts'], rules: { 'import-x/no-cycle': 'error' } },
];

/** The layer rule reads import statements: a type named inline by `import('…')` would pass it unseen. */
const INLINE_TYPE_IMPORT = { selector: 'TSImportType[argument.literal.value=/^\\./]', message: "Name a type with `import type { … } from '…'`, which the layer rule (docs/architecture.md, \"Layers\") checks." };

/**
 * The workflow bundle's modules are preloaded (src/worker/bundle.ts): evaluated once per workflow thread and shared by
 * every workflow it runs. So nothing at their module scope may hold state: a module-level `let`, a Map or Set, or a
 * static class field would be one value for every workflow on the thread, and replay could then differ from the live
 * run. Per-workflow state lives in the workflow function's closure (its state classes) or the SDK's activator.
 */
const SHARED_MODULE_STATE_MESSAGE = 'Workflow modules are shared by every workflow on a thread (src/worker/bundle.ts): keep state in the workflow, not at module scope.';
const SHARED_MODULE_STATE = [
  { selector: "Program > VariableDeclaration[kind!='const']", message: SHARED_MODULE_STATE_MESSAGE },
  { selector: "Program > ExportNamedDeclaration > VariableDeclaration[kind!='const']", message: SHARED_MODULE_STATE_MESSAGE },
  { selector: 'Program > VariableDeclaration > VariableDeclarator > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]', message: SHARED_MODULE_STATE_MESSAGE },
  { selector: 'Program > ExportNamedDeclaration > VariableDeclaration > VariableDeclarator > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]', message: SHARED_MODULE_STATE_MESSAGE },
  { selector: 'PropertyDefinition[static=true][readonly!=true]', message: SHARED_MODULE_STATE_MESSAGE },
];

/** Node's globals that browsers lack, switched off for browser code (the base block turns every Node global on). */
const nodeOnlyOff = Object.fromEntries(Object.keys(globals.node).filter((name) => !(name in globals.browser)).map((name) => [name, 'off']));

module.exports = defineConfig(
  { ignores: ['node_modules/', '.tools/', '.dipper/', '.dipper-cluster/', '.dipper-cluster-test/', '.test-data/', '.soak-data/', '.bench-data/', '.scratch/', 'dist/', 'coverage/', 'src/*/main.built.js'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    // The one type-aware rule: a forgotten await loses errors and, in a workflow, ordering.
    // Only the folders tsconfig.json includes; a .ts file elsewhere is linted without type information.
    files: ['{src,workflows,activities,test,bench}/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': workflowImports(null), ...workflowDeterminism },
  },
  // Later blocks replace the option list, so each depth repeats the whole rule.
  { files: ['workflows/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': workflowImports('^\\.\\./(?!src/common/pure/)') } },
  { files: ['workflows/*/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': workflowImports('^\\.\\./\\.\\./(?!src/common/pure/)') } },
  // Bundled into the workflow sandbox with the workflows that import it: the same rules, and values only from itself.
  { files: ['src/common/pure/*.ts'], rules: { '@typescript-eslint/no-restricted-imports': workflowImports('^\\.\\./'), ...workflowDeterminism } },
  ...layers,
  { files: ['**/*.ts', '**/*.js'], ignores: ['src/temporal/**', 'test/**'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT) } },
  // Later blocks replace the pattern list, so each repeats the ones that still apply.
  { files: ['src/**/*.ts'], ignores: ['src/worker/**', 'src/temporal/**'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT, NO_ACTIVITIES) } },
  { files: ['src/temporal/**/*.ts'], rules: { 'no-restricted-imports': restrictedImports(NO_ACTIVITIES, NO_GATEWAY) } },
  { files: ['src/{registry,isphere}/**/*.ts'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT, NO_ACTIVITIES, NO_GATEWAY) } },
  { files: ['src/common/*.ts'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT, NO_ACTIVITIES, aboveCommon('\\.\\./')) } },
  { files: ['src/common/*/*.ts'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT, NO_ACTIVITIES, aboveCommon('\\.\\./\\.\\./')) } },
  { files: ['src/common/*/*/*.ts'], rules: { 'no-restricted-imports': restrictedImports(TEMPORAL_CLIENT, NO_ACTIVITIES, aboveCommon('\\.\\./\\.\\./\\.\\./')) } },
  { files: ['{src,activities,bench,workflows}/**/*.ts'], rules: { 'no-restricted-syntax': [...byName, INLINE_TYPE_IMPORT] } },
  { files: ['workflows/**/*.ts', 'src/common/pure/*.ts'], rules: { 'no-restricted-syntax': [...byName, INLINE_TYPE_IMPORT, ...SHARED_MODULE_STATE] } },
  {
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain CommonJS config files (this one, jest.config.js).
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The operator console runs in the browser as ES modules: Node's own globals (process, require, Buffer) are not there.
    files: ['src/console/**/*.js'],
    languageOptions: { sourceType: 'module', globals: { ...nodeOnlyOff, ...globals.browser } },
  },
);
