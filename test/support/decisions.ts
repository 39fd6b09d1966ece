import { DecisionKeys } from '../../src/auth/decisionKeys';
import { approvalClaim, type Binding, type Decision } from '../../workflows/isphere/messages';

/**
 * A decision as the gateway sends it, signed with the keys of the stack's signing secret, for tests that send
 * the decide Update straight to Temporal as a gateway would (src/gateway/decisions.ts).
 */
export function signedAsGateway(tokenSecret: string, runId: string, approvalId: string, binding: Binding, d: Decision): Decision {
  return { ...d, proof: new DecisionKeys([tokenSecret]).prove(approvalClaim(runId, approvalId, binding, d, Date.now())) };
}
