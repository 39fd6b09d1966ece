/**
 * How well a record matches a search, for the contract's `confidence`:
 * 1 for the whole name or account, 0.9 for a name that starts with the
 * query, 0.75 for a name that contains it, 0.5 for a match found only in
 * another field (department, title). A caller resolving a person can take a
 * lone 1 and must ask about anything less.
 */
export function matchConfidence(query: string, name: string, others: (string | null)[] = [], exactToo: (string | null)[] = []): number {
  const q = query.trim().toLowerCase();
  if (q === '') return 1;
  const n = name.trim().toLowerCase();
  if (n === q || exactToo.some((x) => x !== null && x.trim().toLowerCase() === q)) return 1;
  if (n.startsWith(q)) return 0.9;
  if (n.includes(q)) return 0.75;
  return others.some((x) => x !== null && x.toLowerCase().includes(q)) ? 0.5 : 0.25;
}
