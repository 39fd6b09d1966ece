import { heartbeat, activityInfo } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { DipperConfig } from '../src/config';
import { sinksOf } from '../src/notify/config';
import { sendTo, type Notice } from '../src/notify/send';

/**
 * Tells people through every configured sink (DIPPER_NOTIFY). A try that
 * fails one sink is retried by Temporal; the sinks that took the notice are
 * kept in the heartbeat, so a retry sends to the others only. Answers the
 * sinks that took it (none configured: none).
 */
export function notifyActivities(config: DipperConfig) {
  return {
    async announce(notice: Notice): Promise<string[]> {
      const sinks = sinksOf(config.notify);
      const done = new Set<string>((activityInfo().heartbeatDetails as string[] | undefined) ?? []);
      const failed: string[] = [];
      for (const sink of sinks) {
        if (done.has(sink)) continue;
        try {
          await sendTo(sink, config.notify, notice, `${config.publicUrl}/console`);
          done.add(sink);
          heartbeat([...done]);
        } catch (err) {
          failed.push(`${sink}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      if (failed.length > 0) throw ApplicationFailure.create({ type: 'NotifyFailed', message: failed.join('; ') });
      return [...done];
    },
  };
}
