import { log } from '@temporalio/workflow';
import { proven, type DecisionClaim, type DecisionProof } from '../src/common/pure/decisionProof';
import { refuse } from './errors';

/**
 * In an Update validator (or a Signal handler): a person's decision without
 * the gateway's valid signature is refused before it enters history, and
 * logged, since whoever sent it went round the gateway.
 */
export function requireProof(claim: DecisionClaim, proof: DecisionProof | undefined, keys: readonly string[] | undefined, what: Record<string, string>): void {
  if (proven(claim, proof, keys ?? [])) return;
  log.warn('refused a decision without a valid proof', { kind: claim.kind, ...what });
  throw refuse('unproven_decision', "This decision does not carry the gateway's proof that an operator made it; nothing was decided.");
}
