/**
 * The reference runtime follows a script written into its task text, so a
 * whole team can be described in the one task a run starts with:
 *
 *   ```dipper-plan
 *   { "rework_first": true, "tasks": [ { "id": "api", "role": "backend", "skill": "worker", "task": "..." } ] }
 *   ```
 *
 * An agent whose task holds such a block leads: it declares the plan,
 * spawns what is ready, reviews and approves its children, then reports and
 * asks to be terminated. An agent without one works: it writes a result
 * into its artifacts folder and signals review.
 */
export interface ScriptedTask {
  id: string;
  role: string;
  skill: string;
  task: string;
  depends_on?: string[];
}

export interface Script {
  /** Send each child one rework message before approving it. */
  rework_first?: boolean;
  tasks: ScriptedTask[];
}

const BLOCK = /```dipper-plan\n([\s\S]*?)\n```/;

/** The script in a task text, or null for a worker. Nested plans live inside task strings. */
export function scriptOf(text: string): Script | null {
  const match = BLOCK.exec(text);
  if (!match) return null;
  const parsed = JSON.parse(match[1]) as Script;
  if (!Array.isArray(parsed.tasks)) throw new Error('dipper-plan block without tasks');
  return parsed;
}

export function planBlock(script: Script): string {
  return '```dipper-plan\n' + JSON.stringify(script) + '\n```';
}
