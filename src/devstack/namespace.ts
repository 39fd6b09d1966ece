import { isNotFoundStatus, TemporalAdmin } from '../temporal';
import type { TemporalTarget } from '../temporal/tls';

// temporal.api.enums.v1.IndexedValueType; wire values never change.
const indexedValueType: Record<string, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const retentionSeconds = 3 * 24 * 3600;
const namespaceWaitMs = 60_000;

export type NamespaceState = 'ready' | 'missing-namespace' | 'missing-search-attributes';

/** Whether the server has the namespace with every named search attribute. */
export async function namespaceState(admin: TemporalAdmin, namespace: string, names: string[]): Promise<NamespaceState> {
  if (!(await admin.hasNamespace(namespace))) return 'missing-namespace';
  const present = await admin.searchAttributeNames(namespace);
  return names.every((name) => present.has(name)) ? 'ready' : 'missing-search-attributes';
}

/**
 * Registers the namespace and search attributes Dipper needs on a server it
 * did not start (TEMPORAL_ADDRESS). Safe to repeat; leaves existing ones alone.
 */
export async function ensureNamespace(
  to: string | TemporalTarget,
  namespace: string,
  searchAttributes: Record<string, string>,
): Promise<void> {
  const address = typeof to === 'string' ? to : to.address;
  await TemporalAdmin.with(to, undefined, async (admin) => {
    const names = Object.keys(searchAttributes);
    if ((await namespaceState(admin, namespace, names)) === 'missing-namespace') await admin.registerNamespace(namespace, retentionSeconds);
    // A new namespace reaches the server's namespace cache some seconds after it is registered.
    const deadline = Date.now() + namespaceWaitMs;
    for (;;) {
      try {
        const state = await namespaceState(admin, namespace, names);
        if (state === 'ready') return;
        if (state === 'missing-search-attributes') await addSearchAttributes(admin, namespace, searchAttributes);
      } catch (err) {
        if (!isNotFoundStatus(err)) throw err;
      }
      if (Date.now() > deadline) throw new Error(`Namespace ${namespace} at ${address} is not ready after ${namespaceWaitMs / 1000}s`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  });
}

async function addSearchAttributes(admin: TemporalAdmin, namespace: string, searchAttributes: Record<string, string>): Promise<void> {
  const present = await admin.searchAttributeNames(namespace);
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(searchAttributes)) {
    if (present.has(name)) continue;
    const value = indexedValueType[type];
    if (value === undefined) throw new Error(`Unknown search attribute type ${type} for ${name}`);
    missing[name] = value;
  }
  await admin.addSearchAttributes(namespace, missing);
}
