// The page's router: / is the jobs page, /jobs/<id> a job's page. Links marked
// data-route change the page without reloading it; each page returns a function that
// stops its timers when the user leaves.
import { replace } from './dom.js';
import { jobsPage } from './jobs_page.js';
import { jobPage } from './job_page.js';

let leave = () => {};

function route() {
  leave();
  const main = document.getElementById('main');
  replace(main);
  const match = location.pathname.match(/^\/jobs\/([^/]+)$/);
  leave = match ? jobPage(main, decodeURIComponent(match[1])) : jobsPage(main);
}

export function navigate(url) {
  history.pushState(null, '', url);
  route();
}

document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-route]');
  if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
  event.preventDefault();
  navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', route);
route();
