// Status page: GET /api/status every 2 s; summary cards and a flat key/value table.
import { api, initShell, fmtBytes, fmtSecs, fmtUptime, el, $ } from '/static/common.js';

const rows = $('#status-rows'), updated = $('#updated');

function flatten(obj, prefix, out) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? prefix + '.' + k : k;
    if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length) flatten(v, key, out);
    else out.push([key, v]);
  }
  return out;
}

function show(v, key) {
  if (v === null || v === undefined) return '–';
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ') || '(none)';
  if (typeof v === 'object') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') {
    if (/bytes/.test(key)) return v + ' (' + fmtBytes(v) + ')';
    if (/uptime/.test(key)) return v + ' (' + fmtUptime(v) + ')';
    if (/seconds/.test(key)) return v + ' (' + fmtSecs(v) + ')';
  }
  return String(v);
}

function set(id, text) { const e = $('#' + id); if (e.textContent !== text) e.textContent = text; }

const STATE_TEXT = { idle: 'Idle', starting: 'Starting…', recording: 'Recording', stopping: 'Stopping…' };

function render(s) {
  let st = STATE_TEXT[s.state] || String(s.state || '–');
  if (s.state === 'recording' && s.kind) st += s.kind === 'audio' ? ' sound' : ' video';
  set('v-state', st);
  $('#card-state').dataset.state = s.state || '';
  set('v-free', s.free_bytes != null ? (s.free_bytes / 1e9).toFixed(1) + ' GB' : '–');
  set('v-camera', s.camera || 'none');
  set('v-microphone', s.microphone || 'none');
  set('v-uptime', fmtUptime(s.uptime_seconds));
  const t = s.temperature_celsius;
  $('#card-temperature').hidden = typeof t !== 'number';
  if (typeof t === 'number') set('v-temperature', t.toFixed(1) + ' °C');
  const fp = s.web && s.web.fingerprint_sha256;
  $('#card-fingerprint').hidden = !fp;
  if (fp) set('v-fingerprint', fp);

  const pairs = flatten(s, '', []).sort((a, b) => a[0].localeCompare(b[0]));
  const have = new Map([...rows.children].map((tr) => [tr.dataset.key, tr]));
  const keep = new Set();
  let prev = null;
  for (const [k, v] of pairs) {
    keep.add(k);
    let tr = have.get(k);
    if (!tr) tr = el('tr', { dataset: { key: k } }, el('th', { scope: 'row', text: k }), el('td'));
    const text = show(v, k);
    if (tr.lastChild.textContent !== text) tr.lastChild.textContent = text;
    if (prev ? prev.nextSibling !== tr : rows.firstChild !== tr) { if (prev) prev.after(tr); else rows.prepend(tr); }
    prev = tr;
  }
  for (const [k, tr] of have) if (!keep.has(k)) tr.remove();
}

let busy = false;
async function poll() {
  if (busy || document.hidden) return;
  busy = true;
  try {
    const s = await api('GET', '/api/status');
    render(s || {});
    updated.textContent = 'Updated ' + new Date().toLocaleTimeString();
    updated.classList.remove('bad');
  } catch (e) {
    updated.textContent = e.message;
    updated.classList.add('bad');
  } finally { busy = false; }
}

initShell().then(() => { poll(); setInterval(poll, 2000); }).catch((e) => { updated.textContent = e.message; });
