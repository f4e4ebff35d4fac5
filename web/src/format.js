// Formatting of times, durations, sizes and percentages for the tables.

export function time(ms) {
  if (!ms) return '—';
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function duration(startMs, endMs) {
  if (!startMs) return '—';
  return span((endMs || Date.now()) - startMs);
}

// A span of milliseconds, to the second: "2h05m", "3m07s", "42s".
export function span(ms) {
  let s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  s %= 60;
  return h ? `${h}h${String(m).padStart(2, '0')}m` : m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}

export function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

export function percent(fraction) {
  return `${Math.round((fraction || 0) * 100)}%`;
}

// A span of milliseconds: "1h", "30m", "45s".
export function millis(ms) {
  const s = Math.round((ms || 0) / 1000);
  if (s % 3600 === 0 && s) return `${s / 3600}h`;
  if (s % 60 === 0 && s) return `${s / 60}m`;
  return `${s}s`;
}
