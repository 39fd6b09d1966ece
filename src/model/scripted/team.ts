import { resultJson, type Conversation } from './conversation';
import type { Script, Step } from './server';

/**
 * The team `dipper demo` shows and the end-to-end test runs on Claude
 * sessions: a lead plans two tasks and spawns a researcher and a writer;
 * they message each other and the lead; the writer asks the lead a
 * question, which the lead answers; the researcher asks one only a person
 * may answer, which the lead escalates; the researcher publishes a summary
 * on iSphere once a person approves; both hand in, the writer is sent back
 * once and hands in again; the lead approves both and asks to end the run.
 *
 * Each part acts on what its conversation holds, as a model would: one
 * step per reply, the first thing still to do.
 */
export const SUMMARY = 'Summary of the research: three findings, customer quotes left as the person decided.';
export const SUMMARY_TO = 'c_0003';

const TONE = { question: 'Which tone should the piece take?', header: 'Tone', multiSelect: false, options: [{ label: 'Friendly', description: 'warm and plain' }, { label: 'Formal', description: 'for the board' }] };
const CUSTOMERS = {
  question: 'May the summary quote the customer list?',
  header: 'Customers',
  multiSelect: false,
  options: [{ label: 'Yes', description: 'quote it' }, { label: 'No', description: 'leave it out' }],
};

const call = (tool: string, input: Record<string, unknown>, say?: string): Step => ({ ...(say ? { say } : {}), calls: [{ tool, input }] });

interface Peer {
  agent_id: string;
  role: string;
  is_leader_of: string[];
}

/** The last list of peers that came back (a list asked while Dipper restarts may be refused, retryable). */
function peers(c: Conversation): Peer[] {
  return (resultJson(c.calls('list_peers').filter((x) => !x.isError).at(-1))?.peers ?? []) as Peer[];
}

/** Lists the peers until a list comes back, as a model told the refusal is retryable would; null once listed. */
function listPeersUntilListed(c: Conversation): Step | null {
  const calls = c.calls('list_peers');
  if (calls.some((x) => !x.isError)) return null;
  return calls.length < 60 ? call('list_peers', { scope: 'all' }) : { say: 'Dipper never listed my peers.' };
}

/** Questions in the inbox not yet answered or passed on, oldest first. */
function openQuestions(c: Conversation): Array<{ qid: string; text: string }> {
  const done = new Set([...c.calls('answer_question'), ...c.calls('escalate_question')].filter((x) => !x.isError).map((x) => String(x.input.qid)));
  // Each question is its own block: two fed at once may reach the model as one user turn.
  return c.userTexts
    .flatMap((t) => t.split('[INBOX QUESTION]').slice(1))
    .map((text) => ({ qid: /qid: (\S+)/.exec(text)?.[1] ?? '', text }))
    .filter((q) => q.qid && !done.has(q.qid));
}

/** Review reports each member sent, by agent id, in order. */
function reportsBy(c: Conversation): Map<string, number> {
  const count = new Map<string, number>();
  // Every report in a turn: two fed at once may reach the model as one.
  for (const t of c.userTexts) {
    for (const [, from] of t.matchAll(/^\[REVIEW REPORT from (\S+)\]/gm)) count.set(from, (count.get(from) ?? 0) + 1);
  }
  return count;
}

export const teamLead: Script = (c) => {
  if (c.calls('declare_plan').filter((x) => !x.isError).length === 0) {
    return call('declare_plan', {
      tasks: [
        { id: 'research', role: 'researcher', skill: 'worker', task: 'Research the topic, share what you find with the writer, and publish a short summary on iSphere once a person approves it.' },
        { id: 'write', role: 'writer', skill: 'worker', task: "Write the piece from the researcher's findings." },
      ],
    }, 'I will split the work in two.');
  }
  const spawned = c.calls('spawn_agent').filter((x) => !x.isError);
  for (const task of ['research', 'write']) {
    if (!spawned.some((x) => x.input.task_id === task)) return call('spawn_agent', { task_id: task });
  }
  const ids = new Map(spawned.map((x) => [String(x.input.task_id), String(resultJson(x)?.agent_id)]));
  const [question] = openQuestions(c);
  if (question?.text.includes(TONE.question)) {
    return call('answer_question', { qid: question.qid, answers: [{ selected_labels: ['Friendly'], text: null }], reason: 'The lead sets the tone of the piece.' });
  }
  if (question) return call('escalate_question', { qid: question.qid, reason: 'Only a person may decide what customer data is published.' });
  const approved = new Set(c.calls('terminate_child').filter((x) => !x.isError).map((x) => String(x.input.agent_id)));
  const reworked = c.calls('send_message').filter((x) => !x.isError && String(x.input.content).startsWith('Rework:')).map((x) => String(x.input.to));
  for (const [member, reports] of reportsBy(c)) {
    if (approved.has(member)) continue;
    // The writer's first draft goes back once; anything else handed in is approved.
    if (member === ids.get('write') && !reworked.includes(member)) return call('send_message', { to: member, content: 'Rework: shorten the draft to one paragraph.' });
    if (member !== ids.get('write') || reports >= 2) return call('terminate_child', { agent_id: member });
  }
  if (approved.size === 2 && c.calls('request_termination').length === 0) return call('request_termination', { detail: 'Both tasks are done and approved.' });
  return { say: 'Waiting for my team.' };
};

export const teamMember: Script = (c) => {
  const first = c.userTexts[0] ?? '';
  return first.includes('plan_task_id: research') ? researcher(c) : first.includes('plan_task_id: write') ? writer(c) : { say: 'I have no part in this team.' };
};

function researcher(c: Conversation): Step {
  const listing = listPeersUntilListed(c);
  if (listing) return listing;
  const writerId = peers(c).find((p) => p.role === 'writer')?.agent_id;
  const leadId = peers(c).find((p) => p.is_leader_of.length > 0)?.agent_id;
  // The writer may not be there yet: look again until it is.
  if (!writerId) return c.calls('list_peers').length < 20 ? call('list_peers', { scope: 'all' }) : { say: 'The writer never came.' };
  const sent = c.calls('send_message').filter((x) => !x.isError).map((x) => String(x.input.to));
  if (!sent.includes(writerId)) return call('send_message', { to: writerId, content: 'Findings: three facts, sources attached.', idempotency_key: 'findings' });
  if (leadId && !sent.includes(leadId)) return call('send_message', { to: leadId, content: 'Research under way; findings sent to the writer.', idempotency_key: 'status' });
  const asked = c.calls('ask_user').find((x) => !x.isError);
  if (!asked) return call('ask_user', { questions: [CUSTOMERS] });
  const planned = c.calls('isphere_send_message').find((x) => !x.isError && resultJson(x)?.dry_run === true);
  if (!planned) return call('isphere_send_message', { target_type: 'contact', target_id: SUMMARY_TO, content_text: SUMMARY });
  const approvalId = String((resultJson(planned)?.approval as { approval_id?: string } | undefined)?.approval_id);
  const sentForReal = c.calls('isphere_send_message').find((x) => !x.isError && resultJson(x)?.send_status === 'sent');
  if (!sentForReal) {
    if (!c.userTexts.some((t) => t.includes('[ISPHERE APPROVAL]') && t.includes(approvalId) && t.includes('was approved'))) return { say: 'Waiting for a person to approve the summary.' };
    return call('isphere_send_message', { target_type: 'contact', target_id: SUMMARY_TO, content_text: SUMMARY, dry_run: false, approval_id: approvalId, idempotency_key: 'summary' });
  }
  // Hands in only once the writer has what it needs (its thanks says so), so the writer's thanks never finds it gone.
  if (!c.userTexts.some((t) => /^\[MESSAGE from \S+\]\nThanks for the findings\./m.test(t))) return { say: 'Waiting for the writer to confirm the findings arrived.' };
  if (c.calls('signal_review').filter((x) => !x.isError).length === 0) {
    return call('signal_review', { detail: `[REVIEW REQUIRED] Research done; the summary was published (${String(resultJson(sentForReal)?.message_ref)}).` });
  }
  return { say: 'Handed in.' };
}

function writer(c: Conversation): Step {
  const listing = listPeersUntilListed(c);
  if (listing) return listing;
  const leadId = peers(c).find((p) => p.is_leader_of.length > 0)?.agent_id;
  const sent = c.calls('send_message').filter((x) => !x.isError).map((x) => String(x.input.to));
  if (leadId && !sent.includes(leadId)) return call('send_message', { to: leadId, content: 'Writing; I will ask you about the tone.', idempotency_key: 'status' });
  const tone = c.calls('ask_user').find((x) => !x.isError);
  if (!tone) return call('ask_user', { questions: [TONE] });
  const findings = c.userTexts.find((t) => /^\[MESSAGE from \S+\]\nFindings:/m.test(t));
  if (!findings) return { say: 'Waiting for the findings.' };
  const researcherId = /^\[MESSAGE from (\S+)\]\nFindings:/m.exec(findings)![1];
  // Once, even when refused: the researcher may have finished and gone by now (recipient_terminated).
  if (!c.calls('send_message').some((x) => x.input.to === researcherId)) return call('send_message', { to: researcherId, content: 'Thanks for the findings.', idempotency_key: 'thanks' });
  const reports = c.calls('signal_review').filter((x) => !x.isError).length;
  if (reports === 0) return call('signal_review', { detail: `[REVIEW REQUIRED] Draft written, tone: ${tone.result.includes('Friendly') ? 'Friendly' : 'as answered'}.` });
  const rework = c.userTexts.some((t) => /^\[MESSAGE from \S+\]\nRework:/m.test(t));
  if (rework && reports === 1) return call('signal_review', { detail: '[REVIEW REQUIRED] Draft shortened to one paragraph.' });
  return { say: 'Handed in.' };
}

/** The scripts by skill, as the scripted model takes them. */
export const teamScripts: Record<string, Script> = { lead: teamLead, worker: teamMember };
