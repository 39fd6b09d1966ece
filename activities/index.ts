import os from 'node:os';
import { ApplicationFailure } from '@temporalio/common';
import fs from 'node:fs/promises';
import path from 'node:path';
import { runtimeFor, type DipperConfig, type RuntimeChoice } from '../src/config';
import { paths, UnsafePathSegment } from '../src/paths';
import type { SkillCatalog } from '../src/skills';
import type { Revocation } from '../src/common/pure/revocations';
import { recordRevocation } from '../src/auth/revoke';
import { tokenRegistryWorkflow } from '../workflows/tokens/registry';
import type { Temporal } from '../src/temporal';
import type { PlanTask } from '../workflows/types';
import type { AgentIdentity, LaunchSpec } from '../src/common/launchPayload';
import type { DipperEvent } from '../src/common/stores/eventStore';
import { diskFailure, onDisk } from './diskFailure';
import { withFaults } from './faults';
import { measureWorkspace, watchUntilOver, type WatchInput } from './workspaceWatch';
import { reviewArtifacts, type Artifact } from './artifacts';
import type { EventStore } from '../src/common/stores/eventStore';
import { WORKER_WAKES, type InboxWakes } from '../src/common/stores/inboxWakes';
import type { RevokedTokens } from '../src/common/stores/revokedTokens';
import { AccountProblem, runAs, type AgentAccounts } from './runtimes/accounts';
import { claudeCommand, claudeEnv, claudeHome } from './runtimes/claude';
import { agentEnv } from './runtimes/agentEnv';
import { TooManyProcesses, type CommandRuntime } from './runtimes/command';
import { buildPayload, type LaunchPayload, type ReadLaunch } from '../src/common/launchPayload';
import { resolveTexts, type ContentStore } from '../src/common/stores/contentStore';
import type { StoredText, Text } from '../src/common/pure/content';
import { launchBody, postWebhook, stopBody } from './runtimes/webhook';
import { spawnPreparation } from './spawn';
import { notifyActivities } from './notify';

export interface ActivityDeps {
  config: DipperConfig;
  tokenSecret: string;
  /** Reaches the token registry (workflows/tokens/registry.ts) and a run's reserveSpawns Update. */
  temporal: Temporal;
  events: EventStore;
  /** Token revocations every gateway reads at each check (written before the registry hears of them). */
  revoked: RevokedTokens;
  /** Long texts the workflows refer to (plan tasks, launch messages). */
  content: ContentStore;
  /** Tells long polls an inbox changed (absent in tools that only replay or inspect). */
  wakes?: InboxWakes;
  skills: SkillCatalog;
  commands: CommandRuntime;
  /** Set when a runtime runs agents as another OS user: workspaces then get groups, agents accounts. */
  accounts?: AgentAccounts;
}


/** All I/O Dipper's workflows do, built from its dependencies (wired in the worker, faked nowhere). */
export function createActivities(deps: ActivityDeps) {
  const { config } = deps;
  const runtimeOf = (skill: string): RuntimeChoice => runtimeFor(config.runtimes, skill);

  const accountFor = (choice: RuntimeChoice, id: AgentIdentity) => {
    if (!deps.accounts) throw new AccountProblem('this worker was started without agent accounts');
    return deps.accounts.processFor(choice, id);
  };

  const provisionRunWorkspace = (runId: string) =>
    onDisk('provision run workspace', async () => {
      const dir = paths.runWorkspace(config.dataDir, runId);
      await fs.mkdir(dir, { recursive: true });
      deps.accounts?.shareWorkspace(dir);
      return dir;
    });

  return withFaults(config.faults, {
    ...notifyActivities(config),
    /** Writes events; `wake` names inboxes (`<run>/<agent>`) that changed, for long polls on any gateway. */
    async recordEvents(events: DipperEvent[], wake?: string[]): Promise<void> {
      await deps.events.append(events);
      // A lost wake only delays a poll to its window's end: never a reason to write the events again.
      if (wake && wake.length > 0 && deps.wakes) await deps.wakes.publish(WORKER_WAKES, wake).catch(() => undefined);
    },

    async revokeTokens(revocation: Revocation): Promise<void> {
      await recordRevocation(deps.temporal, tokenRegistryWorkflow, config, deps.revoked, revocation);
    },

    /** Texts an agent moves out of its state before it continues as new (workflows/agent/spill.ts). */
    async keepTexts({ runId, texts }: { runId: string; texts: string[] }): Promise<StoredText[]> {
      const stored: StoredText[] = [];
      for (const text of texts) stored.push(await deps.content.put(runId, text));
      return stored;
    },

    /** The files a root's report names and its plan's artifacts, read on the run's host for the person's card. */
    async reviewArtifacts({ workspace, report }: { workspace: string; report: Text }): Promise<Artifact[]> {
      const text = typeof report === 'string' ? report : ((await deps.content.get([report.content_ref])).get(report.content_ref) ?? '');
      return reviewArtifacts({ workspace, report: text, account: deps.accounts?.readerOf(workspace), dataDir: config.dataDir });
    },

    /** create_team's check of each member before it started, in runs from before one pass (prepareSpawn checks them now). */
    async skillExists({ skill }: { skill: string }): Promise<boolean> {
      return (await deps.skills.load(skill)) !== null;
    },

    /**
     * The worker that takes this claims the run for its host: the run's
     * folder is made here, and the run's file and process activities come
     * back to this host's queue (workflows/host.ts). No host when workers
     * do not name theirs (one host).
     */
    async claimRunHost({ runId }: { runId: string }): Promise<{ host: string | null; workspacePath: string }> {
      const workspacePath = await provisionRunWorkspace(runId);
      return { host: config.hostId ?? null, workspacePath };
    },

    /** Skills checked, room reserved, folders made, in one step (activities/spawn.ts). */
    prepareSpawn: spawnPreparation(deps),

    /**
     * Bytes under a workspace folder; a file that vanishes while counting
     * counts as nothing. The walk stops once the count passes `stopAbove`
     * (the caller only asks whether the budget is passed), so a folder of a
     * million files costs what its budget's worth does, and it heartbeats as
     * it goes, so a walk that hangs is noticed in seconds, not at the timeout.
     */
    async workspaceBytes({ path: dir, stopAbove = Number.POSITIVE_INFINITY }: { path: string; stopAbove?: number }): Promise<number> {
      return measureWorkspace(dir, stopAbove);
    },

    /** Agents since `workspace-watch-long`: one activity watches a leader's workspaces for up to an hour. */
    async watchWorkspaces(input: WatchInput): Promise<{ team_id: string; bytes: number }[]> {
      return watchUntilOver(input);
    },

    async writePlanFile(input: { runId: string; agentId: string; planId: string; tasks: PlanTask[] }): Promise<string> {
      return onDisk('write plan file', async () => {
        const file = paths.plan(config.dataDir, input.runId, input.agentId, input.planId);
        await fs.mkdir(path.dirname(file), { recursive: true });
        const tmp = `${file}.tmp`;
        // The record holds the words, not the store's references: it is read by people and outlives the store's retention.
        await fs.writeFile(tmp, JSON.stringify({ plan_id: input.planId, owner: input.agentId, tasks: await resolveTexts(deps.content, input.tasks) }, null, 2));
        await fs.rename(tmp, file);
        return file;
      });
    },

    async retirePlanFile({ planPath }: { planPath: string }): Promise<string> {
      const removed = planPath.replace(/\.json$/, '.removed.json');
      try {
        await fs.rename(planPath, removed);
      } catch (err) {
        // A retried activity finds the file already renamed.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw diskFailure('retire plan file', err);
      }
      return removed;
    },

    /** `generation` and `issuedAt` name the launch its token belongs to; workflows from before generations send neither. */
    async launchRuntime(input: { identity: AgentIdentity; launch: LaunchSpec; mode: LaunchPayload['mode']; generation?: number; issuedAt?: number }) {
      const choice = runtimeOf(input.identity.skill);
      if (choice.kind === 'none') return { kind: 'none' as const };
      const body = await deps.skills.load(input.identity.skill);
      if (body === null) {
        throw ApplicationFailure.create({ type: 'unknown_skill', message: 'skill could not be loaded', nonRetryable: true });
      }
      const payload = buildPayload(
        {
          publicUrl: config.publicUrl,
          tokenSecret: deps.tokenSecret,
          tokenTtlSeconds: config.tokenTtlSeconds,
          skillNames: await deps.skills.names(),
          taskBoards: true,
          maxDepth: config.limits.maxDepth,
        },
        input.identity,
        (await resolveTexts(deps.content, input.launch)) as ReadLaunch,
        body,
        input.mode,
        { gen: input.generation ?? 0, issuedAt: input.issuedAt ?? Date.now() },
      );
      if (choice.kind === 'webhook') {
        await postWebhook(choice.url!, launchBody(payload));
        return { kind: 'webhook' as const };
      }
      try {
        const dir = paths.agentRuntime(config.dataDir, input.identity.runId, input.identity.agentId);
        const account = choice.user !== undefined ? accountFor(choice, input.identity) : undefined;
        const claude = choice.kind === 'claude';
        const command = claude ? claudeCommand() : choice.command!;
        const argv = account ? runAs(account, command) : command;
        const home = account?.home ?? (claude ? claudeHome(dir) : os.homedir());
        if (claude) await fs.mkdir(home, { recursive: true, mode: 0o700 });
        const env = { ...agentEnv(choice, payload, home), ...(claude ? claudeEnv(choice, config.publicUrl) : {}) };
        deps.commands.launch(argv, payload, dir, input.mode, env);
      } catch (err) {
        if (err instanceof AccountProblem) throw ApplicationFailure.create({ type: 'runtime_unavailable', message: err.message, nonRetryable: true });
        if (err instanceof TooManyProcesses) {
          throw ApplicationFailure.create({ type: 'quota_exceeded', message: err.message, details: [{ quota: 'runtime_processes', limit: err.limit }], nonRetryable: true });
        }
        // The agent's runtime folder could not be written; a command that cannot start says so in its own words.
        if (err instanceof UnsafePathSegment || typeof (err as NodeJS.ErrnoException).code === 'string') throw diskFailure('launch runtime', err);
        throw err;
      }
      return { kind: 'command' as const };
    },

    async stopRuntime({ runId, agentId, skill }: { runId: string; agentId: string; skill: string }): Promise<void> {
      const choice = runtimeOf(skill);
      if (choice.kind === 'command' || choice.kind === 'claude') await onDisk('stop runtime', () => deps.commands.stop(paths.agentRuntime(config.dataDir, runId, agentId)));
      if (choice.kind === 'webhook') await postWebhook(choice.url!, stopBody(runId, agentId));
    },
  });
}

export type Activities = ReturnType<typeof createActivities>;
