import { ConnectorError } from '../../common/isphere/errors';
import type { Capability, Connector } from './types';

/**
 * A source the contract names that has no implementation on this platform
 * (`uia`, `network`): declared, so callers and `auto` see it, and answering
 * SOURCE_UNAVAILABLE to everything. It claims no capability, so `auto`
 * never counts it as a fallback it tried.
 */
export class UnavailableConnector implements Connector {
  readonly capabilities: ReadonlySet<Capability> = new Set();

  constructor(readonly name: 'uia' | 'network') {}

  private refuse(): never {
    throw new ConnectorError('SOURCE_UNAVAILABLE', `The ${this.name} source is not available on this platform.`, false);
  }

  searchContacts(): never {
    this.refuse();
  }

  searchGroups(): never {
    this.refuse();
  }
}
