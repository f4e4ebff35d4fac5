// Small pieces shared by the pages: state badges, progress bars and a queue's share bar.
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

// A queue's use of the cluster against its guarantee: a bar of its share with a mark at
// the guarantee, red past it (borrowing).
export function shareBar(share, guarantee) {
  const used = Math.min(1, Math.max(0, Number(share) || 0));
  const bar = el('span', { class: used > guarantee + 1e-9 ? 'share-bar borrowing' : 'share-bar' });
  bar.style.width = `${(used * 100).toFixed(1)}%`;
  const mark = el('span', { class: 'share-guarantee' });
  mark.style.left = `${(Math.min(1, guarantee) * 100).toFixed(1)}%`;
  return el('span', { class: 'share', title: `uses ${fmt.percent(used)} of the cluster; guaranteed ${fmt.percent(guarantee)}` },
    bar, mark, el('span', { class: 'progress-text' }, `${fmt.percent(used)} of ${fmt.percent(guarantee)}`));
}
