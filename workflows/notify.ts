import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { Notice } from '../src/notify/send';
import type { EventBuffer } from './events';

/** Tried for ten minutes at most: a notice that late is no longer news. */
const notifier = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  scheduleToCloseTimeout: '10m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '60s' },
});

/**
 * Tells people that something waits for them (DIPPER_NOTIFY), beside the
 * work: nothing waits on it, and a sink that cannot be reached is an event
 * (`notification.failed`), never a block.
 */
export function tellPeople(notice: Notice, events: EventBuffer): void {
  void notifier.announce(notice).then(
    (sinks) => sinks.length > 0 && events.emit('notification.sent', { id: notice.id, kind: notice.kind, sinks }),
    () => events.emit('notification.failed', { id: notice.id, kind: notice.kind }),
  );
}

/** The first words of a text, for a title. */
export function gist(text: string, max = 120): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${Array.from(one).slice(0, max - 1).join('')}…`;
}
