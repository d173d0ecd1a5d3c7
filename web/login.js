// Login page: GET /api/login for setup/TLS hints, POST /api/login with JSON.
import { api, $ } from '/static/common.js';

const form = $('#login-form'), err = $('#login-error'), submit = $('#login-submit');
let lockTimer = 0;

// Only local paths: "/x" but never "//host" or "/\host" (browsers read both as another host).
function target() {
  const next = new URLSearchParams(location.search).get('next');
  if (!next || next[0] !== '/' || next[1] === '/' || next[1] === '\\' || /[\u0000-\u001f]/.test(next)) return '/live';
  try {
    const u = new URL(next, location.origin);
    if (u.origin !== location.origin || u.pathname.startsWith('/login')) return '/live';
    return u.pathname + u.search + u.hash;
  } catch (e) { return '/live'; }
}

function showErr(text) { err.textContent = text; err.hidden = !text; }

// 429: show the server's message and count down on the button until Retry-After has passed.
function lockFor(seconds, text) {
  clearInterval(lockTimer);
  let left = Math.max(1, Math.ceil(seconds));
  submit.disabled = true;
  showErr(text || 'Too many attempts. Try again in ' + left + ' s.');
  const tick = () => {
    if (left <= 0) { clearInterval(lockTimer); submit.disabled = false; submit.textContent = 'Log in'; showErr(''); return; }
    submit.textContent = 'Wait ' + left + ' s';
    left--;
  };
  tick();
  lockTimer = setInterval(tick, 1000);
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const user = $('#user').value.trim(), password = $('#password').value;
  if (!user || !password) { showErr('Enter your user name and password.'); return; }
  submit.disabled = true;
  showErr('');
  try {
    await api('POST', '/api/login', { user, password }, { noRedirect: true });
    location.replace(target());
    return;
  } catch (e) {
    if (e.status === 429) { lockFor(e.retryAfter || Number((/(\d+)\s*s\b/.exec(e.message) || [])[1]) || 30, e.message); return; }
    if (e.code === 'no_users') $('#setup-notice').hidden = false;
    if (e.code === 'wrong_credentials') showErr(e.message || 'Wrong user name or password.');
    else showErr(e.message);
    $('#password').select();
  }
  submit.disabled = false;
});

api('GET', '/api/login', undefined, { noRedirect: true }).then((info) => {
  if (!info) return;
  $('#setup-notice').hidden = !info.setup_needed;
  $('#tls-warning').hidden = info.tls !== false;
}).catch(() => { /* the form still works */ });

$('#user').focus();
