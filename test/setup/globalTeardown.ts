import type { Started } from './globalSetup';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __dipperStack?: Started }).__dipperStack?.stop();
}
