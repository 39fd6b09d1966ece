import type { ProcessMetrics } from '../metrics/temporalCalls';
import type { LongPolls } from './longPolls';
import type { RevocationView } from './revocations';
import { waitingCounts } from './runList';
import type { TeamClient } from './teamClient';

/** Visibility is asked at most this often, however many scrapers: the counts are the same for every replica. */
const WAITING_EVERY_MS = 5000;

/**
 * What a gateway holds and what waits for people, read when scraped. The
 * waiting counts come from Temporal's visibility store (no workflow is
 * asked), shared by every scrape within a few seconds.
 */
export function watchGateway(metrics: ProcessMetrics, from: { polls: LongPolls; revocations: RevocationView; team: TeamClient }): void {
  metrics.gauge('dipper_long_polls_held', 'Inbox long polls this gateway holds open.', () => from.polls.held());
  metrics.gauge('dipper_revocations_age_seconds', 'Seconds since this gateway last copied the token registry\'s list (a fast path: the shared revocations table decides every call).', () => Math.min(from.revocations.ageSeconds(), 1e9));
  let read: { at: number; counts: Promise<Awaited<ReturnType<typeof waitingCounts>>> } | undefined;
  const waiting = () => {
    if (!read || Date.now() - read.at > WAITING_EVERY_MS) read = { at: Date.now(), counts: waitingCounts(from.team) };
    return read.counts;
  };
  metrics.gauge('dipper_questions_waiting', 'Questions waiting for a person (root reviews and escalations included), over every run.', async () => (await waiting()).questions);
  metrics.gauge('dipper_approvals_waiting', "iSphere sends waiting for a person's approval, over every run.", async () => (await waiting()).approvals);
  metrics.gauge('dipper_agents_needing_attention', 'Agents stopped (crashed out, budget spent) or stalled, over every run.', async () => (await waiting()).agents_needing_attention);
}
