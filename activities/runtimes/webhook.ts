import type { LaunchPayload } from '../../src/common/launchPayload';

/** Runtimes that live elsewhere get the launch payload, and later a stop request, by POST. */
export async function postWebhook(url: string, body: unknown): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  if (!res.ok) throw new Error(`runtime webhook answered ${res.status}`);
}

export function launchBody(payload: LaunchPayload) {
  return { action: 'launch', ...payload };
}

export function stopBody(runId: string, agentId: string) {
  return { action: 'stop', run_id: runId, agent_id: agentId };
}
