import { keepFilesPrivate } from '../private';
import { loadConfig } from '../config';
import { startGateway } from './gateway';
import { tellStarted } from '../common/ready';

async function main(): Promise<void> {
  keepFilesPrivate();
  const gateway = await startGateway(loadConfig());
  tellStarted();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      void gateway.close().then(() => process.exit(0));
    });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`dipper gateway failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
