// The REST API client of the page (docs/api.md). Calls that change state (Save Model,
// Kill) always need a token, and every call does when the server listens beyond loopback
// (docs/web-ui.md): on a 401 the page asks for one, keeps it in this tab's sessionStorage
// and sends `Authorization: Bearer <token>` from then on.
import { el, replace } from './dom.js';

const TOKEN_KEY = 'shoal.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || '';
}

function headers(extra = {}) {
  const t = token();
  return t ? { ...extra, Authorization: `Bearer ${t}` } : extra;
}

export async function api(path, { method = 'GET', body, signal } = {}) {
  const response = await fetch(path, {
    method,
    signal,
    headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let value = null;
  try { value = text ? JSON.parse(text) : null; } catch { value = null; }
  if (!response.ok) {
    if (response.status === 401) askForToken();
    const error = value && value.error ? value.error : { code: `HTTP ${response.status}`, message: text };
    throw new ApiError(response.status, error.code, error.message);
  }
  return value;
}

function clickLink(href, filename) {
  const link = el('a', { href, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
}

// Saves path's answer as filename. Without a token it is a plain link (the browser
// streams the file); a download that needs the token is fetched and handed over as a blob.
export async function download(path, filename) {
  if (!token()) return clickLink(path, filename);
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw new ApiError(response.status, 'download', `download failed: HTTP ${response.status}`);
  const url = URL.createObjectURL(await response.blob());
  clickLink(url, filename);
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function askForToken() {
  const banner = document.getElementById('token-banner');
  if (!banner || !banner.hidden) return;
  const input = el('input', { type: 'password', autocomplete: 'off', placeholder: 'token', 'aria-label': 'server token', size: 40 });
  const form = el('form', {
    onsubmit: (event) => {
      event.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      location.reload();
    },
  }, 'This needs a token: your own (from `shoal user add`, kept in ~/.shoal/token) or the server\'s (the file token in its home). ', input,
  el('button', { type: 'submit' }, 'Use token'));
  replace(banner, form);
  banner.hidden = false;
}
