import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { loadOrCreateSecrets } from '../auth/secrets';
import { Operator } from '../client/operator';
import { loadConfig } from '../config';
import { startBridgeSim } from '../isphere/bridgeSim';
import { startScriptedModel } from '../model/scripted/server';
import { teamScripts } from '../model/scripted/team';
import { playThePerson } from './demoPerson';
import { up } from './up';

export interface DemoOptions {
  /** Stop everything once the run has completed (tests, CI); otherwise the stack stays up to look at. */
  exit: boolean;
}

const TASK = 'Research the topic and write a short piece about it.';
const say = (line: string) => process.stdout.write(`demo: ${line}\n`);

/**
 * `dipper demo`: a whole team of Claude agents at work on the embedded
 * stack, without an API key. The agents are real Claude Agent SDK sessions
 * (the `claude` runtime); their model is Dipper's scripted model, and the
 * iSphere bridge is the simulator. The demo plays the person too (answers
 * the question that reaches a human, approves the iSphere send, lets the
 * run end), saying each decision as it makes it, so the run completes by
 * itself while you watch it in the console and the Temporal UI.
 */
export async function demo(opts: DemoOptions): Promise<void> {
  const env = process.env;
  const dataDir = path.resolve(env.DIPPER_DATA_DIR ?? '.dipper-demo');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const model = await startScriptedModel(teamScripts);
  const bridgeToken = crypto.randomBytes(16).toString('hex');
  const bridge = await startBridgeSim({ host: '127.0.0.1', port: 0, bridgeToken, controlToken: crypto.randomBytes(16).toString('hex') });
  const policy = path.join(dataDir, 'isphere-policy.json');
  fs.writeFileSync(policy, JSON.stringify({ rules: [{ skills: ['lead', 'worker'], runs: ['*'], read: { contacts: ['c_000*'], groups: [], conversations: [] } }] }));
  // The demo's own settings; the children of `up` inherit them.
  Object.assign(env, {
    DIPPER_DATA_DIR: dataDir,
    DIPPER_RUNTIMES: JSON.stringify({ default: { kind: 'claude' } }),
    DIPPER_MODEL_UPSTREAM_URL: model.url,
    // The scripted model takes any key; a real one is never needed here.
    DIPPER_MODEL_API_KEY: 'demo-scripted-model',
    DIPPER_ISPHERE_BRIDGE_URL: bridge.url,
    DIPPER_ISPHERE_BRIDGE_TOKEN: bridgeToken,
    DIPPER_ISPHERE_POLICY_FILE: policy,
  });
  const config = loadConfig(env);
  const started = Date.now();
  await up(config, { task: null });
  if (process.exitCode) return;
  const operator = new Operator({ gatewayUrl: config.publicUrl, operatorToken: loadOrCreateSecrets(config).operatorToken });
  const run = await operator.request('POST', '/runs', { task: TASK, root_skill: 'lead' });
  if (run.status !== 201) throw new Error(`the demo run could not start: ${run.status} ${JSON.stringify(run.json)}`);
  const runId: string = run.json.run_id;
  say(`run ${runId} started: a lead, a researcher and a writer, each a Claude session, on the scripted model`);
  say(`watch it at ${config.publicUrl}/console and in the Temporal UI; the demo plays the person`);
  await playThePerson(operator, runId, say);
  say(`run ${runId} completed in ${Math.round((Date.now() - started) / 1000)} s (from the start of the stack)`);
  await model.close().catch(() => undefined);
  await bridge.close().catch(() => undefined);
  if (opts.exit) process.kill(process.pid, 'SIGINT');
  else say('the stack stays up for you to look around; Ctrl-C stops everything');
}
