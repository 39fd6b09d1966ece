import type * as Ed25519 from '@noble/curves/ed25519';
import type * as Utils from '@noble/curves/utils';
import type * as Sha2 from '@noble/hashes/sha2';

/**
 * The curve, the hash and their byte helpers, loaded at first use rather than with this module. Loading them builds
 * their tables (the curve's constants, SHA-512's) and defines every export of their modules; when a workflow sandbox
 * loaded every module of the bundle for each workflow it started, a worker profiled over 50 spawns spent a quarter of
 * its workflow threads' busy time on these tables for workflows that never check a proof (docs/performance.md). The
 * bundle's modules are now loaded once a thread (src/worker/bundle.ts), and a thread whose workflows never check a
 * proof still never builds them. Loading is deterministic; when it happens changes nothing a workflow does, and the
 * one copy a thread keeps holds pure functions only, so its workflows may share it.
 */
// eslint-disable-next-line no-restricted-syntax -- a cache of pure functions, the same for every workflow (above)
let noble:
  | { ed25519: typeof Ed25519.ed25519; sha256: typeof Sha2.sha256 } & Pick<typeof Utils, 'bytesToHex' | 'hexToBytes' | 'utf8ToBytes'>
  | undefined;
function primitives(): NonNullable<typeof noble> {
  /* eslint-disable no-restricted-globals, @typescript-eslint/no-require-imports -- a lazy load, for the reason above */
  if (!noble) {
    const { bytesToHex, hexToBytes, utf8ToBytes } = require('@noble/curves/utils') as typeof Utils;
    noble = {
      ed25519: (require('@noble/curves/ed25519') as typeof Ed25519).ed25519,
      sha256: (require('@noble/hashes/sha2') as typeof Sha2).sha256,
      bytesToHex,
      hexToBytes,
      utf8ToBytes,
    };
  }
  /* eslint-enable no-restricted-globals, @typescript-eslint/no-require-imports */
  return noble;
}

/**
 * A person's decision as the gateway vouches for it. The gateway signs it
 * (Ed25519, under a key derived from its signing secret, which no agent
 * holds) for the operator or webhook it authenticated; the workflow checks
 * the signature in its Update validator against the keys it was started
 * with, and the activity that acts on the decision checks again against
 * the worker's own keys. So a caller who reaches Temporal itself, and can
 * send Updates, still cannot decide. The check is plain arithmetic: the
 * same on every replay.
 */
export interface DecisionClaim {
  /** What is decided. */
  kind: 'isphere_approval' | 'question_answer' | 'question_decline' | 'root_decision';
  run_id: string;
  /** The approval's id; a question's id and when it was asked; the root report's kind and time. */
  subject_id: string;
  /** The hashes of what the person decided on: the text (or a file's caption), and the file. */
  content_sha256: string | null;
  file_sha256: string | null;
  decision: string;
  decider: string;
  via: string;
  reason: string | null;
  delivery_id: string | null;
  /** When the gateway vouched for it (ms). */
  at: number;
}

export interface DecisionProof {
  at: number;
  /** One signature per key the gateway signs with (its current secret's, then any previous one's), hex. */
  signatures: { key: string; sig: string }[];
}

/** A gateway signs with its current secret and the previous ones still accepted: a handful at most. */
const MAX_SIGNATURES = 8;

/** The bytes signed: a fixed order, so nothing depends on how an object's keys were laid out. */
export function claimBytes(c: DecisionClaim): Uint8Array {
  return primitives().utf8ToBytes(JSON.stringify(['dipper decision v1', c.kind, c.run_id, c.subject_id, c.content_sha256, c.file_sha256, c.decision, c.decider, c.via, c.reason, c.delivery_id, c.at]));
}

/** The public key (hex) of a 32-byte private seed. */
export function publicKeyOf(seed: Uint8Array): string {
  const { bytesToHex, ed25519 } = primitives();
  return bytesToHex(ed25519.getPublicKey(seed));
}

/** Signs a claim with each seed. */
export function prove(claim: DecisionClaim, seeds: readonly Uint8Array[]): DecisionProof {
  const bytes = claimBytes(claim);
  const { bytesToHex, ed25519 } = primitives();
  return { at: claim.at, signatures: seeds.map((seed) => ({ key: publicKeyOf(seed), sig: bytesToHex(ed25519.sign(bytes, seed)) })) };
}

/** Whether one of the trusted keys signed this very claim. Malformed input is simply not proof. */
export function proven(claim: DecisionClaim, proof: DecisionProof | undefined, trusted: readonly string[]): boolean {
  // More signatures than keys a gateway signs with is not a proof; the bound keeps a forged Update's check cheap.
  if (!proof || proof.at !== claim.at || !Array.isArray(proof.signatures) || proof.signatures.length > MAX_SIGNATURES) return false;
  const bytes = claimBytes(claim);
  return proof.signatures.some((s) => {
    if (typeof s?.key !== 'string' || typeof s.sig !== 'string' || !trusted.includes(s.key)) return false;
    try {
      const { ed25519, hexToBytes } = primitives();
      return ed25519.verify(hexToBytes(s.sig), bytes, hexToBytes(s.key));
    } catch {
      return false;
    }
  });
}

/** SHA-256 of a text, hex: the same in a workflow, an activity and the gateway. */
export function sha256Hex(text: string): string {
  const { bytesToHex, sha256, utf8ToBytes } = primitives();
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** What a person or a leader gives for one sub-question of an ask_user question (workflows/question/answers.ts). */
export interface GivenAnswer {
  selected_labels: string[];
  text: string | null;
}

/**
 * A person's answer to a question at the human gateway, or their refusal
 * to answer. The subject names the question and when it was asked, since
 * the same question asked again after it closed has the same id.
 */
export function questionClaim(
  runId: string,
  question: { qid: string; asked_at: number },
  operator: string,
  d: { answers: GivenAnswer[] } | { decline: string },
  at: number,
): DecisionClaim {
  const answers = 'answers' in d ? d.answers : null;
  return {
    kind: answers ? 'question_answer' : 'question_decline',
    run_id: runId,
    subject_id: `${question.qid}@${question.asked_at}`,
    content_sha256: answers ? sha256Hex(JSON.stringify(answers.map((a) => [a.selected_labels, a.text]))) : null,
    file_sha256: null,
    decision: answers ? 'answer' : 'decline',
    decider: operator,
    via: 'operator',
    reason: 'decline' in d ? d.decline : null,
    delivery_id: null,
    at,
  };
}

/** A person's verdict on the root's report (a review or a request to end the run), named by its kind and time. */
export function rootDecisionClaim(runId: string, report: { kind: string; ts: number }, d: { verdict: string; text?: unknown; operator?: string }, at: number): DecisionClaim {
  return {
    kind: 'root_decision',
    run_id: runId,
    subject_id: `${report.kind}@${report.ts}`,
    content_sha256: sha256Hex(JSON.stringify(d.text ?? null)),
    file_sha256: null,
    decision: d.verdict,
    decider: d.operator ?? '',
    via: 'operator',
    reason: null,
    delivery_id: null,
    at,
  };
}
