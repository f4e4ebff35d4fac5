// A job's page: its state, spec, containers, logs, charts, board link and saved models,
// with Kill and Save Model. While the job runs the page long-polls the job (wait_version)
// and follows logs and series; once it has ended it shows the same, without polling.
import { api } from './api.js';
import { el, replace, safeHttpUrl } from './dom.js';
import * as fmt from './format.js';
import { progressBar, stateBadge } from './widgets.js';
import { LogView } from './log_view.js';
import { Charts } from './charts.js';

const FINAL = new Set(['SUCCEEDED', 'FAILED', 'KILLED']);

export function jobPage(main, id) {
  const header = el('section', { class: 'job-header', id: 'job-header' });
  const actions = el('div', { class: 'actions' });
  const notice = el('p', { class: 'notice', id: 'notice', role: 'status' });
  const limits = el('p', { class: 'notice warning', id: 'limits-warning', hidden: true });
  const waiting = el('p', { class: 'notice', id: 'wait-reason', hidden: true });
  const info = el('dl', { class: 'info', id: 'job-info' });
  const containers = el('tbody');
  const saved = el('ul', { class: 'saved-models', id: 'saved-models' });
  const spec = el('pre', { class: 'spec', id: 'job-spec' });
  const logs = new LogView(id);
  const charts = new Charts(id);
  replace(main,
    el('p', {}, el('a', { href: '/', 'data-route': '' }, '‹ All jobs')),
    header, actions, notice, limits, waiting, info,
    el('h2', {}, 'Containers'),
    el('table', { class: 'containers', id: 'containers' },
      el('thead', {}, el('tr', {}, ['Container', 'Host', 'Role', 'Index', 'State', 'Started', 'Finished', 'Progress',
        'CPU', 'Memory', 'Exit code', 'Log'].map((h) => el('th', {}, h)))), containers),
    el('h2', {}, 'Logs'), logs.root,
    el('h2', {}, 'Charts'), charts.root,
    el('h2', {}, 'Saved models'), saved,
    el('details', {}, el('summary', {}, 'Spec'), spec));

  let stopped = false;
  let job = null;
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
    replace(containers, tasks.map((t) => el('tr', { 'data-task': `${t.role}-${t.index}` },
      el('td', {}, t.container_id || `${t.role}-${t.index}`), el('td', {}, t.host || '—'), el('td', {}, t.role),
      el('td', {}, t.index), el('td', {}, stateBadge(t.state === 'RUNNING' && t.hung ? 'HUNG' : t.state)), el('td', {}, fmt.time(t.started_ms)),
      el('td', {}, fmt.time(t.finished_ms)), el('td', {}, progressBar(t.progress)),
      el('td', {}, t.cpu === undefined || t.cpu === null ? '—' : `${Number(t.cpu).toFixed(0)}%`),
      el('td', {}, t.rss_peak > t.rss ? `${fmt.bytes(t.rss)} (peak ${fmt.bytes(t.rss_peak)})` : fmt.bytes(t.rss)),
      el('td', {}, t.exit_code === undefined || t.exit_code === null || !t.finished_ms ? '—' : t.exit_code),
      el('td', {}, el('button', { type: 'button', class: 'link', onclick: () => logs.show(t.role, t.index) }, 'log')))));
    logs.setTasks(attempt ? attempt.number : 0, tasks);
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
    while (!stopped) {
      try {
        const q = version ? `?wait_version=${version}&wait_ms=10000` : '';
        job = await api(`/api/v1/jobs/${encodeURIComponent(id)}${q}`);
        if (stopped) return;
        version = job.version;
        document.title = `${job.id} ${job.name} · Shoal`;
        render();
        if (FINAL.has(job.state)) {
          await Promise.all([logs.finish(), charts.finish()]);
          return;
        }
      } catch (error) {
        if (stopped) return;
        notice.textContent = error.status === 404 ? `No job ${id}.` : `Cannot load ${id}: ${error.message}`;
        if (error.status === 404) return;
        await new Promise((r) => setTimeout(r, 2000));
      }
    }
  }
  follow();
  logs.start();
  charts.start();
  return () => { stopped = true; logs.stop(); charts.stop(); };
}
