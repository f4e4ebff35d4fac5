// The job's charts, drawn with uPlot: per task CPU, memory and progress (and GPU
// utilisation and memory when the samples carry them), and one chart per metric the
// program prints. Series come from GET .../series, polled every 2 s with the cursor of
// the previous answer, so only new points travel.
import uPlot from './uPlot.esm.js';
import { api } from './api.js';
import { el, replace } from './dom.js';
import * as fmt from './format.js';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

const RESOURCE_CHARTS = [
  { key: 'cpu', title: 'CPU (% of one core)', value: (s) => s.cpu },
  { key: 'rss', title: 'Memory (RSS)', value: (s) => s.rss, bytes: true },
  { key: 'progress', title: 'Progress', value: (s) => s.progress * 100, unit: '%' },
  { key: 'gpu_util', title: 'GPU utilisation (%)', value: (s) => s.gpu_util },
  { key: 'gpu_mem', title: 'GPU memory', value: (s) => s.gpu_mem, bytes: true },
];

// Joins per-task [x, y] lists on their x values: uPlot's aligned [xs, ys1, ys2, ...].
export function align(lists) {
  const xs = [...new Set(lists.flatMap((points) => points.map((p) => p[0])))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  return [xs, ...lists.map((points) => {
    const ys = new Array(xs.length).fill(null);
    for (const [x, y] of points) ys[at.get(x)] = y;
    return ys;
  })];
}

export class Charts {
  constructor(jobId) {
    this.jobId = jobId;
    this.attempt = 0;
    this.cursor = { sample: 0, point: 0 };
    this.tasks = new Map();  // "role[index]" -> {samples: [], metrics: Map(name -> [point])}
    this.charts = new Map();  // chart key -> {plot, box, labels}
    this.stopped = false;
    this.timer = null;
    this.empty = el('p', { class: 'muted' }, 'No samples yet: containers report them while tasks run.');
    this.root = el('div', { class: 'charts', id: 'charts' }, this.empty);
  }

  start() { this.poll(); }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  async finish() {
    this.stop();
    try { await this.fetch(); } catch { /* keep what is shown */ }
  }

  async poll() {
    clearTimeout(this.timer);
    try {
      await this.fetch();
    } catch (error) {  // not started yet, or the server is busy: try again
      console.warn(`charts: ${error.message}`);
    }
    if (!this.stopped) this.timer = setTimeout(() => this.poll(), 2000);
  }

  async fetch() {
    const q = new URLSearchParams({ after_sample: this.cursor.sample, after_point: this.cursor.point });
    if (this.attempt) q.set('attempt', this.attempt);
    const answer = await api(`/api/v1/jobs/${encodeURIComponent(this.jobId)}/series?${q}`);
    if (this.attempt && answer.attempt !== this.attempt) return;
    this.attempt = answer.attempt;
    this.cursor = answer.next;
    if (!answer.tasks.length) return;
    for (const t of answer.tasks) {
      const name = `${t.role}[${t.index}]`;
      if (!this.tasks.has(name)) this.tasks.set(name, { samples: [], metrics: new Map() });
      const task = this.tasks.get(name);
      task.samples.push(...t.samples);
      for (const p of t.metrics) {
        if (!task.metrics.has(p.name)) task.metrics.set(p.name, []);
        task.metrics.get(p.name).push(p);
      }
    }
    this.draw();
  }

  draw() {
    this.empty.remove();
    const names = [...this.tasks.keys()].sort();
    for (const chart of RESOURCE_CHARTS) {
      const lists = names.map((n) => this.tasks.get(n).samples
        .filter((s) => chart.value(s) !== null && chart.value(s) !== undefined)
        .map((s) => [s.t / 1000, chart.value(s)]));
      if (lists.every((l) => !l.length)) continue;  // uPlot cannot scale an empty chart; GPU charts only with GPUs
      this.plot(`resource:${chart.key}`, chart.title, names, lists, { time: true, bytes: chart.bytes });
    }
    const metricNames = [...new Set(names.flatMap((n) => [...this.tasks.get(n).metrics.keys()]))].sort();
    for (const metric of metricNames) {
      const points = names.map((n) => this.tasks.get(n).metrics.get(metric) || []);
      const bySteps = points.every((list) => list.every((p) => p.step !== null && p.step !== undefined));
      const lists = points.map((list) => list.map((p) => [bySteps ? p.step : p.t / 1000, p.value]));
      this.plot(`metric:${metric}`, metric, names, lists, { time: !bySteps });
    }
  }

  plot(key, title, names, lists, { time, bytes }) {
    const data = align(lists);
    const existing = this.charts.get(key);
    if (existing && existing.names === names.join()) {
      existing.plot.setData(data);
      existing.box.dataset.points = data[0].length;
      return;
    }
    if (existing) {
      existing.plot.destroy();
      existing.box.remove();
    }
    const area = el('div', { class: 'chart-area' });
    const box = el('figure', { class: 'chart', 'data-chart': key, 'data-points': data[0].length },
      el('figcaption', {}, title), area);
    this.root.append(box);
    const opts = {
      width: 460,
      height: 220,
      scales: { x: { time } },
      axes: [{}, { size: 70, values: bytes ? (u, vals) => vals.map((v) => fmt.bytes(v)) : undefined }],
      series: [{ label: time ? 'time' : 'step' },
        ...names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: true,
          value: bytes ? (u, v) => fmt.bytes(v) : undefined }))],
    };
    this.charts.set(key, { plot: new uPlot(opts, data, area), box, names: names.join() });
  }
}
