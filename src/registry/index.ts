import { noop, noopBytes } from './bench/noop';
import { sendMessage, listPeers } from './beidou/messaging';
import { declarePlan, listReady, removePlan, updatePlanTask } from './beidou/plans';
import { answerQuestion, askUser, escalateQuestion } from './beidou/questions';
import { listPendingReviews, requestTermination, signalReview } from './beidou/reviews';
import { createTeam, spawnAgent, terminateChild } from './beidou/team';
import { taskCheckpoint, taskCreate, taskDelete, taskGet, taskList, taskSetClaim, taskUpdate } from './agentteam';
import { receiveFiles, receiveMessages, searchContacts, searchGroups, sendFile, sendMessage as isphereSendMessage } from './isphere';
import type { Surface, ToolDef } from './types';

/** The canonical registry: the only list of tools. Every surface, schema and doc is built from it. */
export const tools: ToolDef[] = [
  sendMessage,
  listPeers,
  createTeam,
  declarePlan,
  removePlan,
  spawnAgent,
  listReady,
  terminateChild,
  updatePlanTask,
  signalReview,
  requestTermination,
  listPendingReviews,
  askUser,
  answerQuestion,
  escalateQuestion,
  taskList,
  taskGet,
  taskCreate,
  taskUpdate,
  taskSetClaim,
  taskCheckpoint,
  taskDelete,
  searchContacts,
  searchGroups,
  receiveMessages,
  receiveFiles,
  isphereSendMessage,
  sendFile,
] as unknown as ToolDef[];

/** The served surfaces, in registry order (the bench surface is not in `tools`). */
export function surfaces(): Surface[] {
  return [...new Set(tools.map((t) => t.surface))];
}

export function toolsOf(surface: Surface): ToolDef[] {
  return tools.filter((t) => t.surface === surface);
}

/** The bench surface, kept out of `tools` so the published beidou surface and its snapshots stay as they are. */
export const benchTools: ToolDef[] = [noop, noopBytes] as unknown as ToolDef[];
