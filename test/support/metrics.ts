import { readTestEnv } from '../setup/env';

/** One counter's value on a gateway's own metrics page (0 when it has not counted yet), for the series whose labels include `label`. */
export async function gatewayCount(gatewayUrl: string, name: string, label: string): Promise<number> {
  const res = await fetch(`${gatewayUrl}/api/metrics`, { headers: { authorization: `Bearer ${readTestEnv().operatorToken}` } });
  if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(label));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Workflow Updates of one kind a gateway has sent. */
export const updatesSent = (gatewayUrl: string, update: string) => gatewayCount(gatewayUrl, 'dipper_workflow_updates_total', `update="${update}"`);

/** Workflow Queries of one kind a gateway has asked. */
export const queriesAsked = (gatewayUrl: string, query: string) => gatewayCount(gatewayUrl, 'dipper_workflow_queries_total', `query="${query}"`);
