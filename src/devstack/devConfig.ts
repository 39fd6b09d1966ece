import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

/** Search attribute types as the Temporal CLI spells them. */
export const searchAttributeTypes = ['Text', 'Keyword', 'Int', 'Double', 'Bool', 'Datetime', 'KeywordList'] as const;
export type SearchAttributeType = (typeof searchAttributeTypes)[number];

const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an identifier');

const devConfigSchema = z.object({
  namespace: identifier,
  searchAttributes: z.record(identifier, z.enum(searchAttributeTypes)),
  dynamicConfig: z.record(z.string().min(1), z.unknown()).default({}),
});

/** What temporal-config/dev-server.json holds: the namespace Dipper needs and how to run the dev server. */
export type TemporalDevConfig = z.infer<typeof devConfigSchema>;

export function loadTemporalDevConfig(projectRoot: string): TemporalDevConfig {
  const file = path.join(projectRoot, 'temporal-config', 'dev-server.json');
  const parsed = devConfigSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file} is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

export interface DevServerArgsOptions {
  port: number;
  uiPort: number;
  dbFile?: string;
  headless?: boolean;
  /** Overrides the config's namespace (TEMPORAL_NAMESPACE may name another). */
  namespace?: string;
}

/** The argv after the `temporal` binary for `temporal server start-dev`. */
export function devServerArgs(opts: DevServerArgsOptions, devConfig: TemporalDevConfig): string[] {
  // Loopback only: the dev server has no auth and is for this machine alone.
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(opts.port)];
  // Left to itself the CLI picks "a random free port" for these and binds it later; another process took one in
  // between once (in CI), and the server died at start (a nil listener). The two ports after the UI's are ours.
  args.push('--http-port', String(opts.uiPort + 1), '--metrics-port', String(opts.uiPort + 2));
  if (opts.headless) args.push('--headless');
  // The machines this runs on may have no outside network; the UI's news feed would only fail.
  else args.push('--ui-port', String(opts.uiPort), '--ui-disable-news-fetch');
  if (opts.dbFile) args.push('--db-filename', opts.dbFile);
  args.push('--namespace', opts.namespace ?? devConfig.namespace);
  for (const [name, type] of Object.entries(devConfig.searchAttributes)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  for (const [key, value] of Object.entries(devConfig.dynamicConfig)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  return args;
}
