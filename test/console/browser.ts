import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { freePort } from '../../src/devstack/dipperProcess';
import { readTestEnv, testDataRoot } from '../setup/env';
import { startProcess, waitForHttp } from '../support/processes';

/** Where the console's gateway says the Temporal UI is. Only the links' addresses are checked; nothing is served there. */
export const TEMPORAL_UI = 'http://temporal-ui.invalid:8233';

/** An approver of her own, so the tests see a named person answer. */
export const ana = { name: 'Ana', token: `dpo_ana_${crypto.randomBytes(16).toString('hex')}` };

/**
 * A gateway beside the shared one (same Temporal server, worker and data),
 * started with a Temporal UI address and a named approver: the shared
 * gateway has neither.
 */
export async function startConsoleGateway(extraEnv: Record<string, string> = {}): Promise<{ url: string; stop: () => Promise<void> }> {
  const env = readTestEnv();
  const port = await freePort(Number(new URL(env.gatewayUrl).port) + 40);
  const gateway = startProcess(
    'gateway',
    {
      ...env.processEnv,
      DIPPER_PORT: String(port),
      DIPPER_TEMPORAL_UI_URL: TEMPORAL_UI,
      DIPPER_OPERATORS: JSON.stringify([{ name: ana.name, role: 'approver', token: ana.token }]),
      ...extraEnv,
    },
    path.join(testDataRoot, 'console-gateway.log'),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`);
  return { url, stop: () => gateway.kill() };
}

/** Debian's Chromium (or DIPPER_CHROMIUM). Missing, it fails the tests: a browser test that skips proves nothing. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.DIPPER_CHROMIUM ?? '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: install Debian's (apt-get install chromium, as .ci/run does) or name one in DIPPER_CHROMIUM.`);
  }
  // No sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  // No GPU and no /dev/shm (small in many containers): the usual flags for Chromium on a CI machine.
  return chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** Waits for a condition the page reaches by itself (a refresh, an answer); never a fixed sleep. */
export async function until<T>(check: () => Promise<T | undefined | false>, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
