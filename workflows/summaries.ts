import type { Text } from '../src/common/pure/content';
import type { AgentIdentity } from '../src/common/launchPayload';

/**
 * What a person reads about a workflow in the Temporal UI: a one-line
 * summary and a few lines of details, set when it starts (user metadata),
 * beside a current-details line the workflow keeps up to date.
 */
const words = (text: Text, chars: number) =>
  typeof text === 'string' ? (text.length > chars ? `${text.slice(0, chars)}…` : text) : `(${text.bytes} bytes, in the content store)`;

export function agentSummary(id: AgentIdentity, task: Text): { staticSummary: string; staticDetails: string } {
  return {
    staticSummary: `${id.role} (${id.name})${id.leaderId ? '' : ', the root'}`,
    staticDetails: [
      `**Role:** ${id.role}  `,
      `**Name:** ${id.name}  `,
      `**Skill:** ${id.skill}  `,
      `**Leader:** ${id.leaderId ?? 'the user'}${id.teamId ? ` (team ${id.teamId})` : ''}  `,
      `**Depth:** ${id.depth}${id.planTaskId ? `  \n**Plan task:** ${id.planTaskId}` : ''}  `,
      '',
      `**Task:** ${words(task, 500)}`,
    ].join('\n'),
  };
}
