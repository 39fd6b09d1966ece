import type { BenchAgent } from '../client';
import { sequential, type BenchContext, type Row } from '../measure';

interface Link {
  agent: BenchAgent;
  token: string;
}

/**
 * A chain of `levels` agents under the root, each the only member of its
 * leader's team: root → L1 → ... → Llevels. Returns every link, root first.
 */
async function chain(ctx: BenchContext, levels: number): Promise<Link[]> {
  const res = await ctx.agents.operator.request('POST', '/runs', { task: `Benchmark ask_user, ${levels} level(s).` });
  if (res.status !== 201) throw new Error(`start run: ${res.status} ${JSON.stringify(res.json)}`);
  const runId: string = res.json.run_id;
  const links: Link[] = [{ agent: await ctx.agents.connect('beidou', res.json.root.agent_id, res.json.root.agent_token), token: res.json.root.agent_token }];
  for (let level = 1; level <= levels; level++) {
    const leader = links.at(-1)!.agent;
    const out = await leader.call<{ members: { agent_id: string }[] }>('create_team', {
      name: `level-${level}`,
      task: 'Benchmark chain.',
      roles: [{ role: `level-${level}`, skill: 'worker', description: `Level ${level} of the chain.` }],
    });
    const id = out.members[0].agent_id;
    const launch = await ctx.agents.operator.launch(runId, id);
    links.push({ agent: await ctx.agents.connect('beidou', id, launch.token), token: launch.token });
  }
  return links;
}

/**
 * What a leader's runtime does with an [INBOX QUESTION]: read it from the
 * runtime long poll, then answer it (the answerer) or pass it up.
 */
function holder(gatewayUrl: string, link: Link, answers: Row | undefined, stop: AbortSignal): Promise<void> {
  return (async () => {
    let cursor = 0;
    while (!stop.aborted) {
      let body: { messages: { content: string }[]; next_cursor: number };
      try {
        const res = await fetch(`${gatewayUrl}/api/runtime/inbox?cursor=${cursor}&wait_ms=10000`, { headers: { authorization: `Bearer ${link.token}` }, signal: stop });
        body = (await res.json()) as typeof body;
      } catch {
        if (stop.aborted) return;
        continue;
      }
      cursor = body.next_cursor ?? cursor;
      for (const m of body.messages ?? []) {
        const qid = /^\[INBOX QUESTION\]\nqid: (q_[A-Za-z0-9_-]+)/.exec(m.content)?.[1];
        if (!qid) continue;
        if (answers) await answers.time(() => link.agent.call('answer_question', { qid, answers: [{ selected_labels: ['Yes'], text: null }], reason: 'Benchmark.' }));
        else await link.agent.call('escalate_question', { qid, reason: 'Benchmark: not mine to answer.' });
      }
    }
  })();
}

/**
 * ask_user answered by a leader `hops` levels up: the asker's call returns
 * once each holder below has read the question from its inbox and passed it
 * on, and the answerer has answered. Each call asks anew (its own words).
 * The answerer's own answer_question calls are timed too (warm-up ones
 * included): issue 40's target for ask_user is what it costs beyond them.
 */
export async function askUserScenario(ctx: BenchContext, hops: number): Promise<void> {
  const row = ctx.row(`ask_user, answered ${hops} hop${hops === 1 ? '' : 's'} up`, ['noop', 'update']);
  const answers = ctx.row(`answer_question, the answerer's own call (${hops} hop${hops === 1 ? '' : 's'})`, ['noop', 'update']);
  const links = await chain(ctx, hops);
  const asker = links.at(-1)!.agent;
  const stop = new AbortController();
  // The asker's leader is links[hops - 1]; the answerer is the root (links[0]).
  const holders = links.slice(0, hops).map((link, i) => holder(ctx.agents.gatewayUrl, link, i === 0 ? answers : undefined, stop.signal));
  try {
    await sequential(row, Math.max(1, Math.round(ctx.counts.warmup / 4)), ctx.counts.ask, async (i) => {
      const out = await asker.call<{ answer_text: string }>('ask_user', {
        questions: [{ question: `Proceed with step ${i}?`, header: 'Go', multiSelect: false, options: [{ label: 'Yes', description: '' }, { label: 'No', description: '' }] }],
      });
      if (out.answer_text !== 'Go: Yes') throw new Error(`unexpected answer ${out.answer_text}`);
    });
  } finally {
    stop.abort();
    await Promise.all(holders.map((h) => h.catch(() => undefined)));
  }
}
