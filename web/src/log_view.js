// The logs of a job's tasks: one tab per task the containers table lists (while it lists
// at most TAB_LIMIT; past that, a tab for the task shown, chosen with the table's log
// buttons) and one for the attempt's application master (role "am"); the chosen log is
// followed live (GET .../logs with offsets, every
// second, one fetch at a time), can be downloaded whole (.../logs/raw) and searched on the
// server (.../logs/search). Log text is only ever set as text.
import { api, download } from './api.js';
import { el, replace } from './dom.js';

const KEEP_CHARS = 2 << 20;  // the page keeps the last 2 MiB of a followed log
const TAB_LIMIT = 16;

export class LogView {
  constructor(jobId) {
    this.jobId = jobId;
    this.attempt = 0;
    this.tasks = [];  // the tasks with a tab: those the table lists, when few
    this.tabKeys = '';
    this.current = null;  // {role, index}
    this.offset = 0;
    this.pending = Promise.resolve();  // the fetch in flight; the next one waits for it
    this.timer = null;
    this.stopped = false;
    this.tabs = el('div', { class: 'tabs', role: 'tablist', id: 'log-tabs' });
    this.text = el('pre', { class: 'log', id: 'log-text', tabindex: 0 });
    this.query = el('input', { type: 'search', placeholder: 'search this log', 'aria-label': 'search the log', id: 'log-query' });
    this.results = el('ol', { class: 'log-matches', id: 'log-matches' });
    this.downloadButton = el('button', { type: 'button', id: 'log-download', onclick: () => this.download() }, 'Download');
    const search = el('form', { class: 'log-search', onsubmit: (e) => { e.preventDefault(); this.search(); } },
      this.query, el('button', { type: 'submit' }, 'Search'), this.downloadButton);
    this.root = el('div', { class: 'logs' }, this.tabs, search, this.results, this.text);
  }

  base(path) {
    const q = new URLSearchParams({ role: this.current.role, index: this.current.index, attempt: this.attempt });
    return `/api/v1/jobs/${encodeURIComponent(this.jobId)}/${path}?${q}`;
  }

  // The tasks the containers table lists now (one page of the attempt's). The log shown
  // stays while the user pages through the table; a new attempt shows its first task.
  setTasks(attempt, tasks) {
    const listed = tasks.length <= TAB_LIMIT ? tasks.map((t) => ({ role: t.role, index: t.index })) : [];
    const newAttempt = attempt !== this.attempt;
    this.attempt = attempt;
    this.tasks = listed;
    if ((newAttempt || !this.current) && tasks.length) {
      this.show(tasks[0].role, tasks[0].index);
    } else {
      this.renderTabs();
    }
  }

  renderTabs() {
    const key = (t) => `${t.role}-${t.index}`;
    const tabs = [...this.tasks];
    const current = this.current;
    if (current && current.role !== 'am' && !tabs.some((t) => key(t) === key(current))) tabs.push(current);
    if (this.attempt) tabs.push({ role: 'am', index: 0, label: 'application master' });
    const keys = tabs.map(key).join();
    if (keys !== this.tabKeys) {
      this.tabKeys = keys;
      replace(this.tabs, tabs.map((t) => el('button', {
        type: 'button', role: 'tab', 'data-task': key(t), onclick: () => this.show(t.role, t.index),
      }, t.label || `${t.role}[${t.index}]`)));
    }
    for (const tab of this.tabs.children) tab.setAttribute('aria-selected', Boolean(current) && tab.dataset.task === key(current));
  }

  show(role, index) {
    this.current = { role, index };
    this.offset = 0;
    this.text.textContent = '';
    replace(this.results);
    this.renderTabs();
    this.poll();
  }

  // One fetch at a time: two from the same offset would both append (an ended job's page
  // asks once when it opens the first tab and once when it sees the end).
  fetchMore() {
    const next = () => this.fetchToEnd();
    this.pending = this.pending.then(next, next);
    return this.pending;
  }

  async fetchToEnd() {
    while (this.current) {
      const shown = this.current;
      const chunk = await api(`${this.base('logs')}&offset=${this.offset}`);
      if (shown !== this.current) return;
      this.offset = chunk.next_offset;
      if (!chunk.text) return;
      const follow = this.text.scrollTop + this.text.clientHeight >= this.text.scrollHeight - 20;
      this.text.append(document.createTextNode(chunk.text));
      if (this.text.textContent.length > KEEP_CHARS) this.text.textContent = this.text.textContent.slice(-KEEP_CHARS);
      if (follow) this.text.scrollTop = this.text.scrollHeight;
      if (chunk.next_offset >= chunk.size) return;
    }
  }

  async poll() {
    clearTimeout(this.timer);
    try { await this.fetchMore(); } catch { /* the job may not have started: try again */ }
    if (!this.stopped) this.timer = setTimeout(() => this.poll(), 1000);
  }

  start() {}

  // The job has ended: read what is left, then stop following.
  async finish() {
    this.stopped = true;
    clearTimeout(this.timer);
    try { await this.fetchMore(); } catch { /* nothing more */ }
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async search() {
    const q = this.query.value;
    if (!this.current || !q) return replace(this.results);
    try {
      const found = await api(`${this.base('logs/search')}&q=${encodeURIComponent(q)}`);
      replace(this.results, found.matches.length
        ? found.matches.map((m) => el('li', { value: m.line }, el('code', {}, m.text)))
        : el('li', { class: 'muted' }, `No line holds “${q}”.`),
      found.truncated ? el('li', { class: 'muted' }, 'More lines match; showing the first ones.') : null);
    } catch (error) {
      replace(this.results, el('li', {}, `Cannot search: ${error.message}`));
    }
  }

  async download() {
    if (!this.current) return;
    const url = `${this.base('logs/raw')}&download=1`;
    const name = `${this.jobId}-${this.current.role}-${this.current.index}.log`;
    try { await download(url, name); } catch (error) { replace(this.results, el('li', {}, error.message)); }
  }
}
