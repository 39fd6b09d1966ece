import type { DipperConfig } from '../config';
import { readLiveStack } from './stackRecord';

/** `dipper status`: the stack `npm start` runs, as recorded; exit 1 when none runs. */
export function printStatus(config: DipperConfig): number {
  const stack = readLiveStack(config.stackFile);
  if (!stack) {
    process.stderr.write(`dipper: no Dipper stack is running (none recorded in ${config.stackFile})\n`);
    return 1;
  }
  const { temporal } = stack;
  const processes = Object.entries(stack.processes).map(([name, pid]) => `${name} ${pid ?? '-'}`).join(', ');
  process.stdout.write(
    [
      `Dipper is running (supervisor pid ${stack.pid}, since ${stack.startedAt}).`,
      `  Gateway:     ${stack.gatewayUrl} (MCP ${stack.gatewayUrl}/mcp/beidou)`,
      `  Temporal:    ${temporal.address}, namespace ${temporal.namespace}, task queue ${temporal.taskQueue}` +
        (temporal.bundled ? ' (bundled dev server)' : ''),
      `  Temporal UI: ${temporal.uiUrl ?? 'external server'}`,
      `  Data:        ${stack.dataDir}`,
      `  Processes:   ${processes}`,
      '',
    ].join('\n'),
  );
  return 0;
}
