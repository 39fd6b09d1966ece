import { el } from './dom.js';

/** Workflow ids as workflows/ids.ts builds them: the Temporal UI finds a run, an agent or a question by them. */
export const runWorkflowId = (runId) => `run/${runId}`;
export const agentWorkflowId = (runId, agentId) => `run/${runId}/agent/${agentId}`;
export const questionWorkflowId = (runId, qid) => `run/${runId}/question/${qid}`;

let ui = { url: null, namespace: '' };

/** From GET /api/console; a gateway that knows no Temporal UI gets no links. */
export function useTemporalUi(url, namespace) {
  ui = { url: url || null, namespace };
}

/**
 * A link to the workflow's page in the Temporal UI. Without a run id the UI
 * opens the workflow's latest run, which is the one to look at after a
 * continue-as-new.
 */
export function temporalLink(workflowId) {
  if (!ui.url) return null;
  return el('a', {
    class: 'temporal',
    href: `${ui.url}/namespaces/${encodeURIComponent(ui.namespace)}/workflows/${encodeURIComponent(workflowId)}`,
    target: '_blank',
    rel: 'noopener noreferrer',
    title: `${workflowId} in the Temporal UI`,
    'data-workflow-id': workflowId,
    text: 'Temporal ↗',
  });
}

/** The approval of an iSphere send (workflows/ids.ts approvalWorkflowId). */
export const approvalWorkflowId = (runId, approvalId) => `run/${runId}/approval/${approvalId}`;
