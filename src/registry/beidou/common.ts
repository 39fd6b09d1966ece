import { z } from 'zod';
import { isTaskId, TASK_ID } from '../../paths';
import { invalidInput, ToolError } from '../../common/toolErrors';
import { defineTool, type ToolContext, type ToolDef } from '../types';

const HIDDEN = ['caller_agent_id', 'run_id'] as const;

/** The flags each permission class implies; every beidou tool fits one of them. */
const FLAGS = {
  read_only: { readOnly: true, destructive: false, idempotent: true },
  agent_mutation: { readOnly: false, destructive: false, idempotent: false },
  destructive: { readOnly: false, destructive: true, idempotent: false },
} as const;

type BeidouFields = 'surface' | 'owner' | 'hiddenContext' | 'readOnly' | 'destructive' | 'idempotent';

/** A beidou tool: the surface's owner and hidden context, and flags derived from its permission class. */
export function beidouTool<In extends z.ZodObject, Out>(def: Omit<ToolDef<In, Out>, BeidouFields>): ToolDef<In, Out> {
  return defineTool({ ...def, surface: 'beidou', owner: 'team-orchestration', hiddenContext: HIDDEN, ...FLAGS[def.permission] });
}

export const id = (what: string) => z.string().min(1).max(200).describe(what);

/**
 * A plan task id as declared: it becomes the artifacts folder's name, so its
 * character set and length are part of the published schema (src/paths.ts).
 */
export const taskId = (what: string) =>
  z
    .string()
    .regex(TASK_ID, 'a task id is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit')
    .refine(isTaskId, 'a task id cannot contain ".."')
    .describe(what);

/** Agent ids are Dipper's own (`ag_…`); anything else cannot name an agent. */
export const agentId = (what: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9_-]+$/, 'not an agent id')
    .describe(what);

/** Byte limits come from configuration, so they are checked here rather than baked into the schema. */
export function checkBytes(field: string, value: string, max: number): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > max) throw invalidInput(field, `${field} is ${bytes} bytes; the limit is ${max}.`);
}

/** Existence check of skills, so a typo is caught before anything durable happens. */
export async function checkSkills(ctx: ToolContext, items: { skill: string }[], field: string): Promise<void> {
  for (const [i, item] of items.entries()) {
    if (!(await ctx.skills.exists(item.skill))) {
      // The skills that do exist, so an agent can correct itself without guessing.
      const available = await ctx.skills.names();
      throw new ToolError('unknown_skill', `Skill "${item.skill}" has no SKILL.md. Skills here: ${available.join(', ') || '(none)'}.`, {
        field: `${field}[${i}].skill`,
        skill: item.skill,
        available,
      });
    }
  }
}

export const callerHandle = (ctx: ToolContext) => ctx.team.agent(ctx.caller.runId, ctx.caller.agentId);
