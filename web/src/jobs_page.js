// The jobs page: every job of the history, newest first, filtered by state, user and
// name, 50 a page; the filters and page live in the URL's query. Above them, the server's
// queues: each one's use against its guarantee, its waiting jobs and its credit; under
// each queued job, why it waits. Refreshes every 3 s.
import { api } from './api.js';
import { el, replace } from './dom.js';
import * as fmt from './format.js';
import { progressBar, shareBar, stateBadge } from './widgets.js';

const PAGE = 50;
const STATES = ['', 'QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'KILLED'];

export function jobsPage(main) {
  const query = new URLSearchParams(location.search);
  const filters = {
    state: query.get('state') || '',
    user: query.get('user') || '',
    name: query.get('name') || '',
    offset: Math.max(0, Number(query.get('offset')) || 0),
  };
  const stateSelect = el('select', { name: 'state', 'aria-label': 'state' },
    STATES.map((s) => el('option', { value: s, selected: s === filters.state ? 'selected' : null }, s || 'any state')));
  const userInput = el('input', { name: 'user', placeholder: 'user', value: filters.user, 'aria-label': 'user' });
  const nameInput = el('input', { name: 'name', placeholder: 'name contains', value: filters.name, 'aria-label': 'name' });
  const apply = (offset) => {
    Object.assign(filters, { state: stateSelect.value, user: userInput.value.trim(), name: nameInput.value.trim(), offset });
    const q = new URLSearchParams();
    for (const key of ['state', 'user', 'name']) if (filters[key]) q.set(key, filters[key]);
    if (filters.offset) q.set('offset', filters.offset);
    history.replaceState(null, '', q.toString() ? `/?${q}` : '/');
    load();
  };
  stateSelect.addEventListener('change', () => apply(0));
  const form = el('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); apply(0); } },
    stateSelect, userInput, nameInput, el('button', { type: 'submit' }, 'Filter'));
  const body = el('tbody');
  const status = el('p', { class: 'muted', id: 'jobs-status' });
  const prev = el('button', { type: 'button', onclick: () => apply(Math.max(0, filters.offset - PAGE)) }, '‹ Newer');
  const next = el('button', { type: 'button', onclick: () => apply(filters.offset + PAGE) }, 'Older ›');
  const table = el('table', { class: 'jobs', id: 'jobs' },
    el('thead', {}, el('tr', {}, ['Id', 'Name', 'User', 'Queue', 'Framework', 'State', 'Progress', 'Started', 'Duration']
      .map((h) => el('th', {}, h)))), body);
  const queuesBody = el('tbody');
  const queuesNote = el('p', { class: 'muted', id: 'queues-note' });
  const queues = el('details', { class: 'queues', id: 'queues', open: 'open' }, el('summary', {}, 'Queues'),
    el('table', {}, el('thead', {}, el('tr', {}, ['Queue', 'Use of the cluster', 'Max', 'Running', 'Waiting', 'Credit']
      .map((h) => el('th', {}, h)))), queuesBody), queuesNote);
  replace(main, el('h1', {}, 'Jobs'), queues, form, table, el('div', { class: 'pager' }, prev, status, next));

  let timer = null;
  let stopped = false;
  async function load() {
    clearTimeout(timer);
    const q = new URLSearchParams({ limit: PAGE, offset: filters.offset });
    for (const key of ['state', 'user', 'name']) if (filters[key]) q.set(key, filters[key]);
    try {
      const [list, queueList] = await Promise.all([api(`/api/v1/jobs?${q}`), api('/api/v1/queues')]);
      if (stopped) return;
      replace(body, list.jobs.map(row));
      replace(queuesBody, ...queueList.queues.map(queueRow), ...(queueList.unconfigured || []).map(unconfiguredRow));
      queuesNote.textContent = queueList.error
        ? `queues.yaml was changed but not reloaded; the queues above stay in force: ${queueList.error}`
        : `A job that has waited ${fmt.millis(queueList.max_wait_ms)} goes before younger ones; one that has ` +
          `already run, once it has waited ${fmt.millis(queueList.max_wait_to_resume_ms)} in all.`;
      const first = list.total ? list.offset + 1 : 0;
      status.textContent = `${first}–${list.offset + list.jobs.length} of ${list.total} jobs`;
      prev.disabled = list.offset === 0;
      next.disabled = list.offset + list.jobs.length >= list.total;
    } catch (error) {
      status.textContent = `Cannot list the jobs: ${error.message}`;
    }
    if (!stopped) timer = setTimeout(load, 3000);
  }
  load();
  return () => { stopped = true; clearTimeout(timer); };
}

function queueRow(queue) {
  return el('tr', { 'data-queue': queue.name },
    el('td', {}, queue.name),
    el('td', {}, shareBar(queue.share, queue.guarantee)),
    el('td', {}, fmt.percent(queue.max)),
    el('td', {}, queue.running),
    el('td', {}, queue.waiting.length),
    el('td', { class: 'credit' }, creditText(queue.credit_ms)));
}

// A queue queues.yaml no longer names that still holds jobs: its running ones run to their
// end, its waiting ones start only if it is configured again.
function unconfiguredRow(queue) {
  return el('tr', {
    'data-queue': queue.name, class: 'unconfigured',
    title: 'no longer in queues.yaml: its running jobs run to their end; kill its waiting jobs and submit them to a ' +
      'configured queue',
  },
  el('td', {}, `${queue.name} (no longer configured)`),
  el('td', {}, ''),
  el('td', {}, ''),
  el('td', {}, queue.running),
  el('td', {}, queue.waiting.length),
  el('td', { class: 'credit' }, ''));
}

// A queue held below its guarantee by the size of its jobs is owed time at its guarantee;
// one that ran beyond it while its jobs waited owes it (docs/scheduling.md, "Credit").
function creditText(creditMs) {
  if (!creditMs) return '';
  const text = `${creditMs > 0 ? 'owed' : 'owes'} ${fmt.span(Math.abs(creditMs))}`;
  return el('span', {
    title: creditMs > 0
      ? 'its jobs were too large for what it had left of its guarantee: its next job may start beyond its guarantee'
      : 'it ran beyond its guarantee while its jobs waited, and pays it back while it waits below its guarantee',
  }, text);
}

function row(job) {
  const href = `/jobs/${encodeURIComponent(job.id)}`;
  const waiting = job.state === 'QUEUED' && job.wait_reason;
  return el('tr', { 'data-job': job.id },
    el('td', {}, el('a', { href, 'data-route': '' }, job.id)),
    el('td', {}, el('a', { href, 'data-route': '' }, job.name)),
    el('td', {}, job.user),
    el('td', {}, job.queue),
    el('td', {}, job.framework),
    el('td', {}, stateBadge(job.state), waiting ? el('div', { class: 'wait-reason' }, job.wait_reason) : null),
    el('td', {}, progressBar(job.progress)),
    el('td', {}, fmt.time(job.started_ms)),
    el('td', {}, fmt.duration(job.started_ms, job.finished_ms)));
}
