import { ConnectorError } from '../../src/common/isphere/errors';

/** The ConnectorError a call fails with; anything else (or success) fails the test. */
export async function failureOf(call: Promise<unknown>): Promise<ConnectorError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ConnectorError) return err;
    throw err;
  }
  throw new Error('expected a ConnectorError');
}
