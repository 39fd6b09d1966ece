import { ConnectorError, type IsphereCode } from '../../common/isphere/errors';
import { AUTO_ORDER, type Capability, type Connector, type Fallback, type SourceName, type SourcePreference } from './types';

/** Codes that say a source is not there right now; `auto` moves on. Any other answer, a refusal included, is the answer. */
const MOVE_ON: ReadonlySet<IsphereCode> = new Set(['SOURCE_UNAVAILABLE', 'NOT_LOGGED_IN', 'TIMEOUT']);

export interface Sourced<T> {
  value: T;
  /** The source that answered. */
  source: SourceName;
  /** The sources tried before it, in order; empty when the first one answered. */
  fallbacks: Fallback[];
}

/**
 * The configured connectors and the rule for choosing one. A named source
 * is used alone. `auto` tries bridge, local_readonly, network, then uia,
 * skipping those that cannot do what the call needs, and moves on only
 * when a source is unavailable, has no logged-in session, or times out;
 * every source it moved past is reported, never silent. An operator's
 * `mock` stands in for all of them.
 */
export class Sources {
  private readonly byName: Map<SourceName, Connector>;

  constructor(
    connectors: Connector[],
    private readonly mock?: Connector,
  ) {
    this.byName = new Map(connectors.map((c) => [c.name, c]));
  }

  async read<T>(preference: SourcePreference, need: Capability, call: (c: Connector) => Promise<T>): Promise<Sourced<T>> {
    if (this.mock) return { value: await answeredBy(this.mock, call), source: this.mock.name, fallbacks: [] };
    if (preference !== 'auto') {
      const named = this.byName.get(preference);
      if (!named || !named.capabilities.has(need)) {
        throw new ConnectorError('SOURCE_UNAVAILABLE', `The ${preference} source cannot do this here.`, false, { source: preference });
      }
      return { value: await answeredBy(named, call), source: named.name, fallbacks: [] };
    }
    const fallbacks: Fallback[] = [];
    for (const name of AUTO_ORDER) {
      const connector = this.byName.get(name);
      if (!connector || !connector.capabilities.has(need)) continue;
      try {
        return { value: await answeredBy(connector, call), source: connector.name, fallbacks };
      } catch (err) {
        if (!(err instanceof ConnectorError)) throw err;
        if (!MOVE_ON.has(err.code)) throw withFallbacks(err, fallbacks);
        fallbacks.push({ source: connector.name, code: err.code });
      }
    }
    throw nothingAnswered(fallbacks);
  }
}

/** A refusal from a source that answered (the object is not there, not readable, ...) names that source for the audit. */
async function answeredBy<T>(connector: Connector, call: (c: Connector) => Promise<T>): Promise<T> {
  try {
    return await call(connector);
  } catch (err) {
    if (err instanceof ConnectorError && !MOVE_ON.has(err.code)) err.source ??= connector.name;
    throw err;
  }
}

function withFallbacks(err: ConnectorError, fallbacks: Fallback[]): ConnectorError {
  if (fallbacks.length === 0) return err;
  const out = new ConnectorError(err.code, err.message, err.retryable, { ...err.details, fallbacks });
  out.source = err.source;
  return out;
}

/** The most useful reason when every source failed: a person must log in, else a timeout, else nothing is there. */
function nothingAnswered(fallbacks: Fallback[]): ConnectorError {
  if (fallbacks.some((f) => f.code === 'NOT_LOGGED_IN')) {
    return new ConnectorError('NOT_LOGGED_IN', 'No source has a logged-in iSphere session; a person must log in by hand.', false, { fallbacks });
  }
  if (fallbacks.some((f) => f.code === 'TIMEOUT')) {
    return new ConnectorError('TIMEOUT', 'No source answered in time.', true, { fallbacks });
  }
  return new ConnectorError('SOURCE_UNAVAILABLE', 'No iSphere source is available for this.', true, { fallbacks });
}
