import os from 'node:os';
import type { Logger } from '../log';
import type { DeploymentInfo as Info, TemporalAdmin } from '../temporal';
import type { PromoteMode } from './config';

type Stamp = { seconds?: { toString(): string } | number | string | null; nanos?: number | null } | null | undefined;

export interface Version {
  deploymentName: string;
  buildId: string;
}

/** What a worker does about its version, given what the deployment looks like now. */
export type Verdict =
  | { act: 'done'; why: string }
  | { act: 'promote'; why: string }
  | { act: 'leave'; why: string }
  | { act: 'wait'; why: string };

const ms = (t: Stamp): number | undefined => (t?.seconds == null ? undefined : Number(t.seconds.toString()) * 1000 + (t.nanos ?? 0) / 1e6);

/**
 * The promotion rule (docs/decisions.md). Build ids are digests and have no
 * order, so "newer" is the server's own record: the build first seen later.
 * A build that was current (or ramping) once and no longer is was moved away
 * from by someone; it never takes itself back, so an operator's rollback holds
 * when the rolled-back build's workers restart.
 */
export function promotionVerdict(info: Info | null | undefined, buildId: string, mode: PromoteMode): Verdict {
  if (mode === 'never') return { act: 'leave', why: 'DIPPER_PROMOTE_VERSION=never: the operator makes versions current' };
  if (!info) return { act: 'wait', why: 'the deployment is not registered yet' };
  const current = info.routingConfig?.currentDeploymentVersion?.buildId || undefined;
  if (current === buildId) return { act: 'done', why: 'this version is current' };
  const summaries = info.versionSummaries ?? [];
  const ours = summaries.find((s) => s.deploymentVersion?.buildId === buildId);
  // Its pollers register the version; until then the server would refuse it.
  if (!ours) return { act: 'wait', why: 'this version is not registered yet' };
  if (mode === 'always') return { act: 'promote', why: 'DIPPER_PROMOTE_VERSION=always' };
  if (!current) return { act: 'promote', why: 'no version is current' };
  if (ms(ours.firstActivationTime) !== undefined) {
    return { act: 'leave', why: `this version was current or ramping before and ${current} replaced it: an operator's choice stands` };
  }
  const theirs = summaries.find((s) => s.deploymentVersion?.buildId === current);
  const [ourTime, theirTime] = [ms(ours.createTime), ms(theirs?.createTime)];
  if (ourTime !== undefined && theirTime !== undefined && theirTime > ourTime) {
    return { act: 'leave', why: `the current version ${current} was first seen after this one` };
  }
  return { act: 'promote', why: `this version was first seen after the current ${current}` };
}

export interface Promotion {
  /** Resolves with the last verdict once there is nothing more to do (or stop() was called). */
  settled: Promise<Verdict>;
  stop(): void;
}

/**
 * Makes this worker's version current when the rule says so, beside polling
 * (the version exists only once its pollers reach the server). Each attempt
 * names the deployment state it decided on (its conflict token), so two
 * workers starting at once cannot both act on a stale picture: the loser
 * reads again and finds its version current, or a newer one. A refusal
 * (another change in between, or a task queue of the current version that
 * this one does not poll yet and that has work) is retried until it clears.
 */
export function startPromotion(o: { admin: TemporalAdmin; namespace: string; version: Version; mode: PromoteMode; log?: Logger; maxPauseMs?: number }): Promotion {
  let stopped = false;
  let wake: () => void = () => undefined;
  const pause = (ms: number) => new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, ms)));
  const identity = `dipper-worker@${os.hostname()}:${process.pid}`;
  const { deploymentName, buildId } = o.version;
  const said = new Set<string>();
  // The same reason once at info: a refusal repeats every few seconds while a rolling upgrade waits for a host.
  const say = (why: string) => {
    if (said.has(why)) return;
    said.add(why);
    o.log?.info({ deploymentName, buildId }, `worker version: ${why}`);
  };
  const settled = (async (): Promise<Verdict> => {
    let waitMs = 100;
    let last: Verdict = { act: 'wait', why: 'not started' };
    while (!stopped) {
      try {
        // Undefined until a poller of the deployment has reached the server.
        const described = await o.admin.describeDeployment(o.namespace, deploymentName);
        last = promotionVerdict(described?.info, buildId, o.mode);
        if (last.act === 'done') return (say(last.why), last);
        if (last.act === 'leave') {
          o.log?.warn({ deploymentName, buildId, current: described?.info?.routingConfig?.currentDeploymentVersion?.buildId }, `worker version not made current: ${last.why}`);
          return last;
        }
        if (last.act === 'promote') {
          const previous = await o.admin.setCurrentVersion({ namespace: o.namespace, deploymentName, buildId, conflictToken: described!.conflictToken, identity });
          o.log?.info({ deploymentName, buildId, previous: previous ?? 'unversioned', why: last.why }, 'worker version made current');
          return { act: 'done', why: last.why };
        }
        say(last.why);
      } catch (err) {
        // FAILED_PRECONDITION: the conflict token is stale, or a task queue with work is not polled by this version yet.
        say(`not current yet (${err instanceof Error ? err.message : String(err)}); trying again`);
      }
      await pause(waitMs);
      waitMs = Math.min(waitMs * 2, o.maxPauseMs ?? 5000);
    }
    return last;
  })();
  return {
    settled,
    stop: () => {
      stopped = true;
      wake();
    },
  };
}
