import { api, describe, token, whenRefused } from './api.js';
import { approvalsView } from './approvals.js';
import { auditView } from './audit.js';
import { inboxView } from './inbox.js';
import { runView } from './runPage.js';
import { runsView } from './runs.js';
import { useTemporalUi } from './temporal.js';

const $ = (id) => document.getElementById(id);
const view = $('view');
let operator = null;
let stop = () => undefined;
let counters = null;

const COUNTERS_MS = 5000;
const setCount = (id, n) => {
  $(id).textContent = n > 0 ? String(n) : '';
};

/** What waits for a person, counted on every page (the pages that list it also count it as they refresh). */
function startCounters() {
  const read = async () => {
    const waiting = await api('/waiting').catch(() => null);
    if (!waiting) return;
    setCount('inbox-count', waiting.questions);
    setCount('approvals-count', waiting.approvals);
    setCount('runs-count', waiting.agents_needing_attention);
  };
  void read();
  counters = setInterval(() => void read(), COUNTERS_MS);
}

function showLogin(message, isError) {
  stop();
  if (counters) clearInterval(counters);
  counters = null;
  operator = null;
  view.replaceChildren();
  for (const id of ['view', 'nav', 'who']) $(id).hidden = true;
  $('login').hidden = false;
  const line = $('login-message');
  line.textContent = message ?? '';
  line.hidden = !message;
  line.className = isError ? 'error' : 'note';
  $('token').focus();
}

function showApp(me) {
  operator = me.operator;
  useTemporalUi(me.temporal_ui_url, me.namespace);
  $('who-name').textContent = `${operator.name} (${operator.role})`;
  $('login').hidden = true;
  for (const id of ['view', 'nav', 'who']) $(id).hidden = false;
  if (!counters) startCounters();
  route();
}

function signOut(message, isError = false) {
  token.clear();
  showLogin(message, isError);
}

/** #/runs, #/runs/<run id>, #/inbox, #/approvals and #/audit; anything else is the run list. */
function route() {
  if (!operator) return;
  stop();
  const [, page, id] = location.hash.split('/');
  const count = (n) => setCount('inbox-count', n);
  const approvals = (n) => setCount('approvals-count', n);
  if (page === 'inbox') stop = inboxView(view, { operator, count });
  else if (page === 'approvals') stop = approvalsView(view, { operator, count: approvals });
  else if (page === 'audit') stop = auditView(view);
  else if (page === 'runs' && id) stop = runView(view, decodeURIComponent(id));
  else stop = runsView(view);
  for (const link of document.querySelectorAll('#nav a')) {
    if (link.dataset.route === (['inbox', 'approvals', 'audit'].includes(page) ? page : 'runs')) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

$('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const candidate = $('token').value.trim();
  if (!candidate) return;
  try {
    const me = await api('/console', { as: candidate });
    token.set(candidate);
    $('token').value = '';
    showApp(me);
  } catch (err) {
    showLogin(err.status === 401 ? 'That token was refused. Check it and paste it again.' : describe(err), true);
  }
});
$('logout').addEventListener('click', () => signOut('Signed out.'));
window.addEventListener('hashchange', route);
whenRefused(() => signOut('The gateway no longer takes your token. Sign in again.', true));

async function start() {
  if (!token.get()) return showLogin();
  try {
    showApp(await api('/console'));
  } catch (err) {
    // A refused token has already signed the tab out (whenRefused); anything else leaves the token for a reload.
    if (err.status !== 401) showLogin(describe(err), true);
  }
}
void start();
