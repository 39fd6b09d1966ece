import { Connection, isGrpcServiceError } from '@temporalio/client';

// gRPC status codes; named here rather than pulling in @grpc/grpc-js for two numbers.
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

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

type RegisterRequest = Parameters<Connection['workflowService']['registerNamespace']>[0];
type Retention = NonNullable<RegisterRequest['workflowExecutionRetentionPeriod']>;

export type NamespaceState = 'ready' | 'missing-namespace' | 'missing-search-attributes';

/** Whether the server has the namespace with every named search attribute. */
export async function namespaceState(connection: Connection, namespace: string, names: string[]): Promise<NamespaceState> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === NOT_FOUND) return 'missing-namespace';
    throw err;
  }
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const present = new Set(Object.keys(customAttributes ?? {}));
  return names.every((name) => present.has(name)) ? 'ready' : 'missing-search-attributes';
}

/**
 * Registers the namespace and search attributes Dipper needs on a server it
 * did not start (TEMPORAL_ADDRESS). Safe to repeat; leaves existing ones alone.
 */
export async function ensureNamespace(
  address: string,
  namespace: string,
  searchAttributes: Record<string, string>,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const names = Object.keys(searchAttributes);
    if ((await namespaceState(connection, namespace, names)) === 'missing-namespace') {
      // protobufjs encodes a plain number into an int64; the generated type only names Long.
      const retention = { seconds: retentionSeconds } as unknown as Retention;
      await ignoring(ALREADY_EXISTS, () =>
        connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: retention }),
      );
    }
    // A new namespace reaches the server's namespace cache some seconds after it is registered.
    const deadline = Date.now() + namespaceWaitMs;
    for (;;) {
      try {
        const state = await namespaceState(connection, namespace, names);
        if (state === 'ready') return;
        if (state === 'missing-search-attributes') await addSearchAttributes(connection, namespace, searchAttributes);
      } catch (err) {
        if (!(isGrpcServiceError(err) && err.code === NOT_FOUND)) throw err;
      }
      if (Date.now() > deadline) throw new Error(`Namespace ${namespace} at ${address} is not ready after ${namespaceWaitMs / 1000}s`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await connection.close();
  }
}

async function addSearchAttributes(
  connection: Connection,
  namespace: string,
  searchAttributes: Record<string, string>,
): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(searchAttributes)) {
    if (customAttributes?.[name] !== undefined) continue;
    const value = indexedValueType[type];
    if (value === undefined) throw new Error(`Unknown search attribute type ${type} for ${name}`);
    missing[name] = value;
  }
  await ignoring(ALREADY_EXISTS, () => connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing }));
}

async function ignoring(code: number, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === code)) throw err;
  }
}
