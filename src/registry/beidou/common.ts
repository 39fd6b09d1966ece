import { z } from 'zod';
import { invalidInput, ToolError } from '../errors';
import type { ToolContext } from '../types';

export const HIDDEN = ['caller_agent_id', 'run_id'] as const;

export const id = (what: string) => z.string().min(1).max(200).describe(what);

/** Byte limits come from configuration, so they are checked here rather than baked into the schema. */
export function checkBytes(field: string, value: string, max: number): void {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > max) throw invalidInput(field, `${field} is ${bytes} bytes; the limit is ${max}.`);
}

/** Existence check of skills, so a typo is caught before anything durable happens. */
export async function checkSkills(ctx: ToolContext, items: { skill: string }[], field: string): Promise<void> {
  for (const [i, item] of items.entries()) {
    if (!(await ctx.skills.exists(item.skill))) {
      throw new ToolError('unknown_skill', `Skill "${item.skill}" has no SKILL.md.`, { field: `${field}[${i}].skill`, skill: item.skill });
    }
  }
}

export const callerHandle = (ctx: ToolContext) => ctx.team.agent(ctx.caller.runId, ctx.caller.agentId);
