import fs from 'node:fs/promises';
import path from 'node:path';
import { paths } from '../src/paths';
import { WORKER_WAKES } from '../src/common/stores/inboxWakes';
import { resolveTexts } from '../src/common/stores/contentStore';
import { agentWorkflowId, stepWakes } from '../workflows/ids';
import { planStepSignal } from '../workflows/agent/messages';
import type { PlanTask, StepAnnounce } from '../workflows/types';
import { diskFailure, onDisk } from './diskFailure';
import type { ActivityDeps } from './index';

/** Writing and retiring plan files: the steps of declare_plan and remove_plan (workflows/agent/planSteps.ts). */
export function planFiles(deps: Pick<ActivityDeps, 'config' | 'content' | 'temporal' | 'wakes'>) {
  return {
    async writePlanFile(input: { runId: string; agentId: string; planId: string; tasks: PlanTask[]; announce?: StepAnnounce }): Promise<string> {
      return told(deps, input.runId, input.announce, () =>
        onDisk('write plan file', async () => {
          const file = paths.plan(deps.config.dataDir, input.runId, input.agentId, input.planId);
          await fs.mkdir(path.dirname(file), { recursive: true });
          const tmp = `${file}.tmp`;
          // The record holds the words, not the store's references: it is read by people and outlives the store's retention.
          await fs.writeFile(tmp, JSON.stringify({ plan_id: input.planId, owner: input.agentId, tasks: await resolveTexts(deps.content, input.tasks) }, null, 2));
          await fs.rename(tmp, file);
          return file;
        }),
      );
    },

    /** `runId` comes with `announce` (runs from before it send neither). */
    async retirePlanFile(input: { planPath: string; runId?: string; announce?: StepAnnounce }): Promise<string> {
      return told(deps, input.runId ?? '', input.runId ? input.announce : undefined, async () => {
        const removed = input.planPath.replace(/\.json$/, '.removed.json');
        try {
          await fs.rename(input.planPath, removed);
        } catch (err) {
          // A retried activity finds the file already renamed.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw diskFailure('retire plan file', err);
        }
        return removed;
      });
    },
  };
}

/**
 * Runs a plan step; when the call announces, tells the leader what it did
 * (so the plan has changed before anyone hears), then the caller's gateway,
 * the file's path as the wake's news. A failed attempt says so at once: the
 * gateway then asks the leader how the call ended (a retry may still succeed).
 */
async function told(deps: Pick<ActivityDeps, 'temporal' | 'wakes'>, runId: string, announce: StepAnnounce | undefined, step: () => Promise<string>): Promise<string> {
  if (!announce) return step();
  const wakes = stepWakes(announce.key);
  const publish = (key: string, news?: string) => deps.wakes?.publish(WORKER_WAKES, [`${runId}/${key}`], news).catch(() => undefined);
  try {
    const file = await step();
    await deps.temporal.handle(agentWorkflowId(runId, announce.leaderId)).signal(planStepSignal, { key: announce.key, path: file });
    await publish(wakes.done, JSON.stringify({ path: file }));
    return file;
  } catch (err) {
    await publish(wakes.failed);
    throw err;
  }
}
