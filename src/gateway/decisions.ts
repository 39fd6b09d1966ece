import { approvalWorkflowId } from '../../workflows/ids';
import { approvalClaim, approvalQuery, decideUpdate, type Decision } from '../../workflows/isphere/messages';
import type { DecisionKeys } from '../auth/decisionKeys';
import type { TeamClient } from './teamClient';

/**
 * A person's decision on an approval, from the console, the operator API or
 * the webhook, once the gateway has authenticated who made it: signed over
 * what the approval sends (read from it first) and sent as its decide
 * Update. The workflow takes no decision without this signature.
 */
export async function decideApproval(team: TeamClient, keys: DecisionKeys, runId: string, approvalId: string, d: Decision): Promise<{ status: string; already: boolean }> {
  const handle = team.handle(approvalWorkflowId(runId, approvalId));
  const { binding } = await team.query(handle, approvalQuery);
  const proof = keys.prove(approvalClaim(runId, approvalId, binding, d, Date.now()));
  return team.update(handle, decideUpdate, [{ ...d, proof }]);
}
