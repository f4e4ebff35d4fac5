// A job's page: its state, spec, containers, logs, charts, board link and saved models,
// with Kill and Save Model. While the job runs the page long-polls the job (wait_version)
// and follows logs and series; once it has ended it shows the same, without polling.
// The containers table shows one page of the latest attempt's tasks (100, filtered by role
// and state, asked of the server with task_limit), under a count of every role's tasks by
// state; the filter and page live in the URL's query, so a job of 10,000 tasks costs the
// page no more than one of 100.
import { api } from './api.js';
import { el, replace, safeHttpUrl } from './dom.js';
import * as fmt from './format.js';
import { progressBar, stateBadge } from './widgets.js';
import { LogView } from './log_view.js';
import { Charts } from './charts.js';

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'KILLED']);
const TASK_PAGE = 100;
const WENT_WRONG = 'FAILED,LOST,HUNG';
// The states a task is shown in (HUNG: running, but hung), for the state filter.
const TASK_STATES = ['PENDING', 'LAUNCHING', 'REGISTERED', 'RUNNING', 'HUNG', 'SUCCEEDED', 'FAILED', 'KILLED', 'LOST'];

const thousands = (n) => Number(n).toLocaleString('en-US');

export function jobPage(main, id) {
  const header = el('section', { class: 'job-header', id: 'job-header' });
  const actions = el('div', { class: 'actions' });
  const notice = el('p', { class: 'notice', id: 'notice', role: 'status' });
  const limits = el('p', { class: 'notice warning', id: 'limits-warning', hidden: true });
  const waiting = el('p', { class: 'notice', id: 'wait-reason', hidden: true });
  const info = el('dl', { class: 'info', id: 'job-info' });
  const containers = el('tbody');
  const query = new URLSearchParams(location.search);
  const view = {  // the tasks shown: a page of those of one role and state
    role: query.get('task_role') || '',
    state: query.get('task_state') || '',
    offset: Math.max(0, Number(query.get('task_offset')) || 0),
  };
  const summary = el('div', { class: 'task-summary', id: 'task-summary' });
  const roleSelect = el('select', { name: 'task_role', 'aria-label': 'role', onchange: () => showTasks({ role: roleSelect.value, offset: 0 }) });
  const stateSelect = el('select', { name: 'task_state', 'aria-label': 'task state', onchange: () => showTasks({ state: stateSelect.value, offset: 0 }) },
    [['', 'any state'], [WENT_WRONG, 'failed, lost or hung'], ...TASK_STATES.map((s) => [s, s])]
      .map(([value, label]) => el('option', { value, selected: value === view.state ? 'selected' : null }, label)));
  const tasksStatus = el('span', { class: 'muted', id: 'tasks-status' });
  const prevTasks = el('button', { type: 'button', id: 'tasks-prev', onclick: () => showTasks({ offset: Math.max(0, view.offset - TASK_PAGE) }) }, '‹ Previous');
  const nextTasks = el('button', { type: 'button', id: 'tasks-next', onclick: () => showTasks({ offset: view.offset + TASK_PAGE }) }, 'Next ›');
  const saved = el('ul', { class: 'saved-models', id: 'saved-models' });
  const spec = el('pre', { class: 'spec', id: 'job-spec' });
  const logs = new LogView(id);
  const charts = new Charts(id);
  replace(main,
    el('p', {}, el('a', { href: '/', 'data-route': '' }, '‹ All jobs')),
    header, actions, notice, limits, waiting, info,
    el('h2', {}, 'Containers'), summary,
    el('div', { class: 'filters task-filters' }, roleSelect, stateSelect, el('span', { class: 'pager' }, prevTasks, tasksStatus, nextTasks)),
    el('table', { class: 'containers', id: 'containers' },
      el('thead', {}, el('tr', {}, ['Container', 'Host', 'Role', 'Index', 'State', 'Started', 'Finished', 'Progress',
        'CPU', 'Memory', 'Exit code', 'Log'].map((h) => el('th', {}, h)))), containers),
    el('h2', {}, 'Logs'), logs.root,
    el('h2', {}, 'Charts'), charts.root,
    el('h2', {}, 'Saved models'), saved,
    el('details', {}, el('summary', {}, 'Spec'), spec));

  let stopped = false;
  let job = null;
  let fetching = null;         // the AbortController of the request in flight
  let queryChanged = false;    // the request in flight asked for other tasks than are wanted now
  let wakeEnded = null;        // resolves the wait of an ended job's page for another query
  // Save requests the server has confirmed. A snapshot taken before the request (a long
  // poll answered while it was on its way) lacks them; they stay listed until one holds them.
  const confirmedSaves = new Map();
  const kill = el('button', { type: 'button', class: 'danger', id: 'kill', onclick: () => onKill() }, 'Kill');
  const save = el('button', { type: 'button', id: 'save-model', onclick: () => onSave() }, 'Save Model');
  const board = el('a', { id: 'board-link', target: '_blank', rel: 'noopener noreferrer', hidden: true }, 'Open board');
  replace(actions, save, kill, board);

  let killArmed = null;
  async function onKill() {
    if (!killArmed) {  // two clicks: no dialog box, nothing to dismiss
      kill.textContent = 'Click again to kill';
      killArmed = setTimeout(() => { killArmed = null; kill.textContent = 'Kill'; }, 5000);
      return;
    }
    clearTimeout(killArmed);
    killArmed = null;
    kill.disabled = true;
    kill.textContent = 'Killing…';
    try {
      await api(`/api/v1/jobs/${encodeURIComponent(id)}/kill`, { method: 'POST', body: {} });
      notice.textContent = `Asked to kill ${id}.`;
    } catch (error) {
      notice.textContent = `Cannot kill ${id}: ${error.message}`;
      kill.disabled = false;
      kill.textContent = 'Kill';
    }
  }
  async function onSave() {
    save.disabled = true;
    try {
      const entry = await api(`/api/v1/jobs/${encodeURIComponent(id)}/save-model`, { method: 'POST', body: {} });
      const targets = entry.targets || [];
      notice.textContent = `Save requested: ${entry.name}` + (targets.length ? `; it commits to ${targets.join(', ')}.` : '.');
      confirmedSaves.set(entry.name, entry);
      renderSaved();
    } catch (error) {
      notice.textContent = `Cannot save a model: ${error.message}`;
    }
    save.disabled = !job || job.state !== 'RUNNING';
  }

  function render() {
    replace(header, el('h1', {}, el('span', { class: 'job-id' }, job.id), ' ', el('span', { class: 'job-name' }, job.name)),
      el('p', {}, stateBadge(job.state), ' ', progressBar(job.progress), ' ', el('span', { class: 'message' }, job.message || '')));
    const spec_ = job.spec || {};
    const rows = [
      ['User', job.user], ['Queue', job.queue], ['Priority', job.priority], ['Framework', job.framework],
      ['Attempt', `${job.attempt} of ${job.max_attempts}`],
      ['Created', fmt.time(job.created_ms)], ['Started', fmt.time(job.started_ms)],
      ['Finished', fmt.time(job.finished_ms)], ['Duration', fmt.duration(job.started_ms, job.finished_ms)],
      ['Commands', (spec_.roles || []).map((r) => `${r.name}: ${r.command}`).join('\n')],
    ];
    replace(info, rows.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
    spec.textContent = JSON.stringify(spec_, null, 2);
    const attempt = (job.attempts || []).at(-1);
    const tasks = attempt ? attempt.tasks || [] : [];
    const page = job.task_page || { offset: 0, limit: TASK_PAGE, matched: tasks.length, total: tasks.length };
    renderTaskControls(page);
    replace(containers, tasks.map((t) => el('tr', { 'data-task': `${t.role}-${t.index}` },
      el('td', {}, t.container_id || `${t.role}-${t.index}`), el('td', {}, t.host || '—'), el('td', {}, t.role),
      el('td', {}, t.index), el('td', {}, stateBadge(t.state === 'RUNNING' && t.hung ? 'HUNG' : t.state)), el('td', {}, fmt.time(t.started_ms)),
      el('td', {}, fmt.time(t.finished_ms)), el('td', {}, progressBar(t.progress)),
      el('td', {}, t.cpu === undefined || t.cpu === null ? '—' : `${Number(t.cpu).toFixed(0)}%`),
      el('td', {}, t.rss_peak > t.rss ? `${fmt.bytes(t.rss)} (peak ${fmt.bytes(t.rss_peak)})` : fmt.bytes(t.rss)),
      el('td', {}, t.exit_code === undefined || t.exit_code === null || !t.finished_ms ? '—' : t.exit_code),
      el('td', {}, el('button', { type: 'button', class: 'link', onclick: () => logs.show(t.role, t.index) }, 'log')))));
    logs.setTasks(attempt ? attempt.number : 0, tasks);
    if (!tasks.length) replace(containers, el('tr', {}, el('td', { colspan: 12, class: 'muted' }, page.matched ? 'No tasks on this page.' : page.total ? 'No task matches the filter.' : 'No tasks yet.')));
    const queued = job.state === 'QUEUED' && job.wait_reason;
    waiting.hidden = !queued;
    waiting.textContent = queued ? `Waiting: ${job.wait_reason}` +
      (job.expected_start_ms ? ` (expected at ${fmt.time(job.expected_start_ms)})` : '') : '';
    limits.hidden = !job.limits_not_enforced;
    limits.textContent = job.limits_not_enforced ? `Limits: ${job.limits_not_enforced}` : '';
    const url = safeHttpUrl(job.board_url || '');
    board.hidden = !url;
    if (url) board.href = url;
    const running = job.state === 'RUNNING';
    save.disabled = !running;
    if (FINAL.has(job.state) || job.state === 'QUEUED') {
      kill.disabled = FINAL.has(job.state);
      if (FINAL.has(job.state)) kill.textContent = 'Kill';
    }
    renderSaved();
  }
  // The count of each role's tasks by state, most first ("worker: 9,998 RUNNING, 1 FAILED,
  // 1 PENDING"), each count a button that shows those tasks; the filters; the pager.
  function renderTaskControls(page) {
    const roles = job.task_summary || [];
    const wrong = roles.reduce((n, r) => n + r.states.filter((s) => WENT_WRONG.split(',').includes(s.state))
      .reduce((m, s) => m + s.count, 0), 0);
    replace(summary, roles.map((r) => el('div', { class: 'task-role', 'data-role': r.role },
      el('span', { class: 'task-role-name' }, `${r.role}:`), ' ',
      r.states.map((s, i) => [i ? ', ' : '', el('button', {
        type: 'button', class: `link task-count state-text-${s.state.toLowerCase()}`, 'data-state': s.state,
        title: `show ${r.role}'s ${s.state} tasks`, onclick: () => showTasks({ role: r.role, state: s.state, offset: 0 }),
      }, `${thousands(s.count)} ${s.state}`)]))),
    wrong && view.state !== WENT_WRONG ? el('div', {}, el('button', {
      type: 'button', class: 'link went-wrong', id: 'tasks-went-wrong', onclick: () => showTasks({ role: '', state: WENT_WRONG, offset: 0 }),
    }, `Show the ${thousands(wrong)} failed, lost or hung task${wrong === 1 ? '' : 's'}`)) : null);
    const roleNames = [...new Set([...((job.spec || {}).roles || []).map((r) => r.name), ...roles.map((r) => r.role), view.role].filter(Boolean))];
    if (roleSelect.options.length !== roleNames.length + 1 || [...roleSelect.options].some((o, i) => i && o.value !== roleNames[i - 1])) {
      replace(roleSelect, el('option', { value: '' }, 'every role'), roleNames.map((n) => el('option', { value: n }, n)));
    }
    roleSelect.value = view.role;
    stateSelect.value = view.state;
    const shown = ((job.attempts || []).at(-1) || {}).tasks || [];
    const filtered = view.role || view.state;
    tasksStatus.textContent = page.matched
      ? `${thousands(page.offset + Math.min(1, shown.length))}–${thousands(page.offset + shown.length)} of ${thousands(page.matched)}` +
        (filtered ? ` matching tasks (${thousands(page.total)} in all)` : ' tasks')
      : filtered ? `no matching tasks (${thousands(page.total)} in all)` : 'no tasks';
    prevTasks.disabled = page.offset === 0;
    nextTasks.disabled = page.offset + shown.length >= page.matched;
  }
  // Shows other tasks: changes the view, keeps it in the URL and asks the server at once
  // (a long poll in flight is dropped).
  function showTasks(changes) {
    Object.assign(view, changes);
    const q = new URLSearchParams();
    if (view.role) q.set('task_role', view.role);
    if (view.state) q.set('task_state', view.state);
    if (view.offset) q.set('task_offset', view.offset);
    history.replaceState(null, '', `${location.pathname}${q.toString() ? `?${q}` : ''}`);
    queryChanged = true;
    if (fetching) fetching.abort();
    if (wakeEnded) wakeEnded();
  }
  function taskQuery() {
    const q = new URLSearchParams({ task_limit: TASK_PAGE, task_offset: view.offset });
    if (view.role) q.set('task_role', view.role);
    if (view.state) q.set('task_state', view.state);
    return q;
  }

  function renderSaved() {
    const models = [...((job && job.saved_models) || [])];
    for (const m of models) confirmedSaves.delete(m.name);
    models.push(...confirmedSaves.values());
    replace(saved, models.length ? models.map((m) => el('li', { 'data-model': m.name },
      el('span', { class: 'model-name' }, m.name), ' ', el('span', { class: 'muted' }, m.state),
      m.uri ? [' ', el('code', {}, m.uri)] : null, ' ', el('span', { class: 'muted' }, `(asked ${fmt.time(m.requested_ms)})`),
      m.state === 'failed' && m.message ? [' ', el('span', { class: 'model-error' }, m.message)] : null))
      : el('li', { class: 'muted' }, 'No saved models yet.'));
  }

  async function follow() {
    let version = 0;
    let ended = false;
    while (!stopped) {
      const again = queryChanged;  // other tasks are wanted: ask now, without waiting
      queryChanged = false;
      const q = taskQuery();
      if (version && !again) {
        q.set('wait_version', version);
        q.set('wait_ms', 10000);
      }
      fetching = new AbortController();
      try {
        const answer = await api(`/api/v1/jobs/${encodeURIComponent(id)}?${q}`, { signal: fetching.signal });
        if (stopped) return;
        if (queryChanged) continue;  // asked for other tasks than are wanted now
        job = answer;
        version = job.version;
        document.title = `${job.id} ${job.name} · Shoal`;
        render();
        if (FINAL.has(job.state)) {
          if (!ended) {
            ended = true;
            await Promise.all([logs.finish(), charts.finish()]);
          }
          // Nothing changes any more: wait until other tasks are wanted.
          if (!queryChanged) await new Promise((resolve) => { wakeEnded = resolve; });
          wakeEnded = null;
        }
      } catch (error) {
        if (stopped) return;
        if (error.name === 'AbortError') continue;
        notice.textContent = error.status === 404 ? `No job ${id}.` : `Cannot load ${id}: ${error.message}`;
        if (error.status === 404) return;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }
  follow();
  logs.start();
  charts.start();
  return () => {
    stopped = true;
    if (fetching) fetching.abort();
    if (wakeEnded) wakeEnded();
    logs.stop();
    charts.stop();
  };
}
