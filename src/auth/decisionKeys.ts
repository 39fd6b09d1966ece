import crypto from 'node:crypto';
import { prove, publicKeyOf, type DecisionClaim, type DecisionProof } from '../common/pure/decisionProof';

/**
 * The keys that vouch for a person's decision (src/common/pure/decisionProof.ts),
 * derived from the signing secrets: the current one signs, and every
 * secret still accepted during a rotation signs too, so an approval
 * started under the old secret still takes a decision made under the new
 * one. The gateways and the worker derive the same keys; no agent holds a
 * secret they come from.
 */
export class DecisionKeys {
  private readonly seeds: Uint8Array[];
  /** Hex public keys, the current secret's first. */
  readonly publicKeys: string[];

  constructor(secrets: readonly string[]) {
    this.seeds = [...new Set(secrets.filter(Boolean))].map((s) => new Uint8Array(crypto.createHmac('sha256', s).update('dipper decision key v1').digest()));
    this.publicKeys = this.seeds.map(publicKeyOf);
  }

  /** The gateway's signature over a decision it authenticated. */
  prove(claim: DecisionClaim): DecisionProof {
    return prove(claim, this.seeds);
  }
}
