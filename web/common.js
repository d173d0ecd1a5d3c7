// KioskCam web app: shared helpers (fetch, formatting, top bar, toasts).
// Loaded as an ES module by every page. No framework, no network but this server.

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function goLogin() {
  location.href = '/login?next=' + encodeURIComponent(location.pathname + location.search);
}

// api('GET', '/api/status') -> parsed JSON (or null for 204).
// Throws ApiError with a human message. 401 sends the browser to /login
// unless opts.noRedirect is set (the login page handles its own 401).
export async function api(method, path, body, opts = {}) {
  const init = { method, headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'network', 'Cannot reach the camera. Check the network and try again.');
  }
  if (res.status === 401 && !opts.noRedirect) {
    goLogin();
    throw new ApiError(401, 'unauthorized', 'Please log in.');
  }
  if (res.status === 204) return null;
  let data = null;
  const text = await res.text();
  if (text) {
    try { data = JSON.parse(text); } catch (e) { data = null; }
  }
  if (!res.ok) {
    const err = data && data.error ? data.error : {};
    let msg = err.message;
    if (!msg) msg = res.status === 403 ? 'Admin only.' : 'The server answered ' + res.status + '.';
    const e = new ApiError(res.status, err.code || 'http_' + res.status, msg);
    e.retryAfter = Number(res.headers.get('Retry-After')) || 0;
    throw e;
  }
  return data;
}

// ---- formatting ----
export function fmtBytes(n) {
  if (n === null || n === undefined || isNaN(n)) return '–';
  n = Number(n);
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (Math.abs(n) >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? String(Math.round(n)) : n.toFixed(1)) + ' ' + units[i];
}

export function fmtSecs(s) {
  if (s === null || s === undefined || isNaN(s)) return '';
  s = Math.max(0, Math.round(Number(s)));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const pad = (x) => String(x).padStart(2, '0');
  return h ? h + ':' + pad(m) + ':' + pad(sec) : m + ':' + pad(sec);
}

export function fmtUptime(s) {
  if (s === null || s === undefined || isNaN(s)) return '–';
  s = Math.floor(Number(s));
  if (s < 60) return s + ' s';
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
  const parts = [];
  if (d) parts.push(d + ' d');
  if (h || d) parts.push(h + ' h');
  parts.push(m + ' min');
  return parts.join(' ');
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
export function fmtDate(ymd) {
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(String(ymd || ''));
  if (!m) return String(ymd || '');
  const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
  return DAYS[d.getUTCDay()] + ' ' + d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()] + ' ' + m[1];
}

// "2026-11-28 10:14:55" -> "10:14:55"
export function timeOf(start) {
  const m = /(\d{1,2}:\d{2}(:\d{2})?)/.exec(String(start || ''));
  return m ? m[1] : String(start || '');
}

export function isDate(s) { return /^\d{8}$/.test(String(s || '')); }

// ---- DOM ----
export const $ = (sel, root = document) => root.querySelector(sel);

export function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else if (v === true) e.setAttribute(k, '');
      else e.setAttribute(k, String(v));
    }
  }
  for (const k of kids.flat()) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

const ICONS = {
  video: 'M3 7a2 2 0 0 1 2-2h9a2 2 0 0 1 2 2v2.5l4-2.5v10l-4-2.5V17a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  screen: 'M3 5h18v11H3zM8 20h8M12 16v4',
  audio: 'M12 3a3 3 0 0 1 3 3v6a3 3 0 0 1-6 0V6a3 3 0 0 1 3-3zM5 11a7 7 0 0 0 14 0M12 18v3',
  photo: 'M4 8h3l2-3h6l2 3h3v11H4zM12 16.5a3.5 3.5 0 1 0 0-7 3.5 3.5 0 0 0 0 7z',
  event: 'M13 2 4 14h7l-1 8 9-12h-7z',
  close: 'M6 6l12 12M18 6 6 18',
  back: 'M15 5l-7 7 7 7',
};
export function icon(name, label) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'icon icon-' + name);
  if (label) { svg.setAttribute('role', 'img'); svg.setAttribute('aria-label', label); }
  else svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS(ns, 'path');
  p.setAttribute('d', ICONS[name] || ICONS.photo);
  svg.append(p);
  return svg;
}

let toastTimer = 0;
// toast('Saved') or toast('Photo saved', {href: url, text: 'Open'}) or toast(msg, null, 'error')
export function toast(msg, link, kind) {
  let box = document.getElementById('toast');
  if (!box) {
    box = el('div', { id: 'toast', class: 'toast', role: 'status', 'aria-live': 'polite' });
    document.body.append(box);
  }
  box.replaceChildren(el('span', { text: msg }));
  if (link) box.append(' ', el('a', { href: link.href, target: link.target || null, text: link.text || 'Open' }));
  box.classList.toggle('error', kind === 'error');
  box.classList.add('show');
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove('show'), link ? 8000 : 4000);
}

export function showError(e) {
  if (e && e.status === 401) return;
  toast(e && e.message ? e.message : String(e), null, 'error');
}

// The top bar lives in each page's HTML (#topbar); this fills in the user and role.
// body[data-role] drives the visibility of .admin-only elements (CSS).
export async function initShell() {
  const btn = document.getElementById('logout');
  if (btn) btn.addEventListener('click', async () => {
    btn.disabled = true;
    try { await api('POST', '/api/logout', undefined, { noRedirect: true }); } catch (e) { /* go anyway */ }
    location.href = '/login';
  });
  const me = await api('GET', '/api/me');
  document.body.dataset.role = me && me.role === 'admin' ? 'admin' : 'viewer';
  const u = document.getElementById('me');
  if (u && me) u.textContent = me.user + (me.role === 'admin' ? ' · admin' : '');
  return me || { user: '', role: 'viewer' };
}

export function param(name) { return new URLSearchParams(location.search).get(name); }

// Replace (or push) the query string of the current page.
export function setQuery(params, push) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null && v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  const url = location.pathname + (s ? '?' + s : '');
  if (url === location.pathname + location.search) return;
  if (push) history.pushState(null, '', url); else history.replaceState(null, '', url);
}
