// Small pieces shared by the pages: state badges and progress bars.
import { el } from './dom.js';
import * as fmt from './format.js';

export function stateBadge(state) {
  return el('span', { class: `state state-${String(state).toLowerCase()}` }, state);
}

export function progressBar(fraction) {
  const value = Math.min(1, Math.max(0, Number(fraction) || 0));
  const bar = el('span', { class: 'progress-bar' });
  bar.style.width = `${(value * 100).toFixed(1)}%`;  // CSSOM: the page's CSP allows no style attributes
  return el('span', { class: 'progress', title: fmt.percent(value) }, bar,
    el('span', { class: 'progress-text' }, fmt.percent(value)));
}
