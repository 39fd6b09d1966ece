import type { Operator } from '../client/operator';

/**
 * The person of the demo team (src/model/scripted/team.ts): answers the
 * question that reaches a human ("No"), approves the iSphere send, lets the
 * run end, saying each decision; returns once the run has completed. A read
 * that fails (an outage) is tried again on the next round.
 */
export async function playThePerson(operator: Operator, runId: string, say: (line: string) => void): Promise<void> {
  // A list read just after a decision may still show what was decided: each is decided once.
  const handled = new Set<string>();
  const decide = async (id: string, path: string, body: unknown, line: string) => {
    if (handled.has(id)) return;
    const res = await operator.request('POST', path, body);
    if (res.status !== 200 && res.status !== 409) return;
    handled.add(id);
    if (res.status === 200) say(line);
  };
  for (;;) {
    const view = await operator.request('GET', `/runs/${runId}`);
    if (view.json?.status === 'completed') return;
    if (view.json?.status === 'cancelled') throw new Error('the demo run was cancelled');
    for (const q of (await operator.request('GET', `/questions?run=${runId}`)).json?.questions ?? []) {
      if (q.system?.kind === 'root_termination') {
        await decide(q.qid, `/runs/${runId}/root/decision`, { kind: 'termination', verdict: 'approve' }, 'the person lets the run end');
      } else if (!q.system) {
        await decide(q.qid, `/runs/${runId}/questions/${q.qid}/answer`, { answers: [{ selected_labels: ['No'], text: null }] }, `the person answers "${q.questions?.[0]?.question}": No`);
      }
    }
    for (const a of (await operator.request('GET', `/isphere/approvals?run=${runId}`)).json?.approvals ?? []) {
      await decide(a.approval_id, `/runs/${runId}/isphere/approvals/${a.approval_id}/approve`, {}, `the person approves the iSphere send ${a.approval_id}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
