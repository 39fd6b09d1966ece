import crypto from 'node:crypto';
import { z } from 'zod';

/**
 * People who steer runs. Each has a token of their own and a role; every
 * human action records the name. The generated operator token (or
 * DIPPER_OPERATOR_TOKEN) stays as the embedded default: an admin named
 * "operator".
 *
 * - viewer: reads (runs, agents, events);
 * - approver: a viewer who also decides for the root's human (reviews, terminations; later answers and approvals);
 * - admin: everything, including starting and ending runs, revoking tokens and reading launch payloads (they hold tokens).
 */
export type Role = 'viewer' | 'approver' | 'admin';
export interface OperatorIdentity {
  name: string;
  role: Role;
}

const RANK: Record<Role, number> = { viewer: 0, approver: 1, admin: 2 };

export const mayAct = (who: OperatorIdentity, needs: Role): boolean => RANK[who.role] >= RANK[needs];

const entry = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/, 'a name of 1-64 letters, digits, spaces and ._@-'),
    role: z.enum(['viewer', 'approver', 'admin']),
    /** The token itself, or its SHA-256 in hex so the file holds no secret. */
    token: z.string().min(24).optional(),
    token_sha256: z.string().regex(/^[a-f0-9]{64}$/).optional(),
  })
  .refine((e) => (e.token === undefined) !== (e.token_sha256 === undefined), 'give exactly one of token and token_sha256');

const digest = (token: string): string => crypto.createHash('sha256').update(token).digest('hex');

export class Operators {
  private readonly byDigest = new Map<string, OperatorIdentity>();

  constructor(list: (OperatorIdentity & { token_sha256: string })[]) {
    for (const o of list) this.byDigest.set(o.token_sha256, { name: o.name, role: o.role });
  }

  /** Who holds this token, or undefined. Looked up by digest: the token never sits in a map or a log. */
  identify(token: string): OperatorIdentity | undefined {
    return this.byDigest.get(digest(token));
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** The operator with this name (an approval webhook names the person who decided). */
  named(name: string): OperatorIdentity | undefined {
    for (const o of this.byDigest.values()) if (o.name === name) return o;
    return undefined;
  }
}

/**
 * The embedded admin, then the operators listed in `raw` (config.operators:
 * DIPPER_OPERATORS, or the file DIPPER_OPERATORS_FILE names). A malformed
 * list stops the process at start, naming the entry.
 */
export function loadOperators(defaultToken: string, raw: string | undefined): Operators {
  const listed: z.infer<typeof entry>[] = [];
  if (raw !== undefined && raw.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new Error('DIPPER_OPERATORS must be JSON: [{"name": "…", "role": "viewer|approver|admin", "token": "…"}]');
    }
    if (!Array.isArray(parsed)) throw new Error('DIPPER_OPERATORS must be a JSON list');
    parsed.forEach((item, i) => {
      const r = entry.safeParse(item);
      if (!r.success) throw new Error(`DIPPER_OPERATORS entry ${i}: ${r.error.issues.map((x) => `${x.path.join('.') || 'entry'}: ${x.message}`).join('; ')}`);
      listed.push(r.data);
    });
  }
  const all = [{ name: 'operator', role: 'admin' as const, token_sha256: digest(defaultToken) }, ...listed.map((e) => ({ name: e.name, role: e.role, token_sha256: e.token_sha256 ?? digest(e.token!) }))];
  const names = new Set<string>();
  const digests = new Set<string>();
  for (const o of all) {
    if (names.has(o.name)) throw new Error(`DIPPER_OPERATORS: the name "${o.name}" is taken twice`);
    if (digests.has(o.token_sha256)) throw new Error(`DIPPER_OPERATORS: "${o.name}" has a token another operator has`);
    names.add(o.name);
    digests.add(o.token_sha256);
  }
  return new Operators(all);
}
