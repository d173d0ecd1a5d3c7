// Settings page (admin): one control per key, motion mask editor, PUT only changed keys.
import { api, initShell, el, $ } from '/static/common.js';

const form = $('#settings-form'), fields = $('#fields'), msg = $('#set-msg');
const errBox = $('#form-error'), okBox = $('#form-status');
let orig = {}, schema = {}, masks = [];

const FIELDS = {
  'camera.rotation': { label: 'Rotation', type: 'select', options: [[0, '0°'], [90, '90°'], [180, '180°'], [270, '270°']] },
  'camera.mirror': { label: 'Mirror the picture', type: 'checkbox' },
  'motion.threshold_percent': { label: 'Motion threshold (% of the picture that must change)', type: 'number' },
  'events.mode': { label: 'Recording mode', type: 'select', options: [['continuous', 'Continuous'], ['events', 'Events only'], ['both', 'Both']] },
  'events.pre_seconds': { label: 'Seconds kept before an event', type: 'number', min: 0 },
  'events.post_seconds': { label: 'Seconds kept after an event', type: 'number', min: 0 },
  'storage.retention_days': { label: 'Keep recordings for (days)', type: 'number', min: 0 },
  'stream.url': { label: 'Stream URL', type: 'text', placeholder: 'rtmp://… (empty: off)' },
  'overlay.text': { label: 'Text on the picture (date and time: %Y-%m-%d %H:%M:%S; empty: none)', type: 'text', placeholder: '%Y-%m-%d %H:%M:%S  {device_name}' },
  'overlay.position': { label: 'Where', type: 'select', options: [['top-left', 'Top left'], ['top-right', 'Top right'], ['bottom-left', 'Bottom left'], ['bottom-right', 'Bottom right']] },
  'privacy.masks': { label: 'Blacked-out areas: [[left, top, width, height], …] as fractions of the picture as shown', type: 'text', placeholder: '[[0.6, 0, 0.4, 0.3]]' },
  'timelapse.interval_seconds': { label: 'Seconds between two frames (0: no timelapse)', type: 'number', min: 0 },
  'timelapse.fps': { label: 'Frames a second of the movie', type: 'number', min: 1 },
};
const GROUPS = { camera: 'Camera', motion: 'Motion', events: 'Events', storage: 'Storage', stream: 'Stream', overlay: 'Time on the picture', privacy: 'Privacy masks', timelapse: 'Timelapse (a movie a day)' };
const MASK_KEY = 'motion.mask';

function say(t) { msg.textContent = t || ''; msg.hidden = !t; }
function idFor(key) { return 'f-' + key.replace(/[^a-z0-9]+/gi, '-'); }
function hintOf(key) { const s = schema[key]; return s ? (typeof s === 'string' ? s : s.allowed || s.description || '') : ''; }

function control(key, value) {
  const def = FIELDS[key] || { label: key, type: typeof value === 'boolean' ? 'checkbox' : typeof value === 'number' ? 'number' : 'text' };
  const id = idFor(key), hint = hintOf(key);
  const hintId = hint ? id + '-hint' : null;
  let input, extra = null;
  if (def.type === 'select') {
    const opts = def.options.slice();
    if (!opts.some(([v]) => String(v) === String(value))) opts.push([value, String(value)]);
    input = el('select', { id, name: key, 'aria-describedby': hintId },
      ...opts.map(([v, t]) => el('option', { value: String(v), selected: String(v) === String(value), text: t })));
  } else if (def.type === 'checkbox') {
    input = el('input', { id, name: key, type: 'checkbox', 'aria-describedby': hintId });
    input.checked = !!value;
  } else if (def.type === 'number') {
    input = el('input', { id, name: key, type: 'number', step: 'any', inputmode: 'decimal', min: def.min ?? null, 'aria-describedby': hintId });
    input.value = value ?? '';
    // A range slider too, when the schema hint names the bounds ("0.0 to 1.0", "1...100", "1-10").
    const m = /(-?\d+(?:\.\d+)?)\s*(?:to|\.\.\.?|–|-)\s*(-?\d+(?:\.\d+)?)/.exec(hint);
    if (m && key === 'motion.threshold_percent') {
      const lo = Number(m[1]), hi = Number(m[2]);
      if (hi > lo) {
        extra = el('input', { type: 'range', min: lo, max: hi, step: (hi - lo) / 100, 'aria-label': def.label + ' slider' });
        extra.value = value ?? lo;
        extra.addEventListener('input', () => { input.value = extra.value; });
        input.addEventListener('input', () => { extra.value = input.value; });
      }
    }
  } else {
    input = el('input', { id, name: key, type: 'text', spellcheck: 'false', autocapitalize: 'none', placeholder: def.placeholder || null, 'aria-describedby': hintId });
    input.value = value == null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  input.dataset.key = key;
  input.dataset.kind = def.type;
  const hintEl = hint ? el('span', { class: 'hint', id: hintId, text: 'Allowed: ' + hint }) : null;
  if (def.type === 'checkbox') {
    return el('div', { class: 'field check' }, input, el('label', { for: id, text: def.label }), hintEl);
  }
  return el('div', { class: 'field' }, el('label', { for: id, text: def.label }), extra ? el('div', { class: 'range-row' }, extra, input) : input, hintEl);
}

function build() {
  const keys = Object.keys(FIELDS).filter((k) => k in orig).concat(Object.keys(orig).filter((k) => !(k in FIELDS) && k !== MASK_KEY).sort());
  const groups = new Map();
  for (const k of keys) {
    const g = k.split('.')[0];
    if (!groups.has(g)) groups.set(g, []);
    groups.get(g).push(control(k, orig[k]));
  }
  fields.replaceChildren(...[...groups].map(([g, ctrls]) =>
    el('fieldset', { class: 'card group' }, el('legend', { text: GROUPS[g] || g }), ...ctrls)));
  masks = readMasks(orig[MASK_KEY]);
  drawMasks();
  const mh = hintOf(MASK_KEY);
  if (mh && !$('#mask-hint')) $('#masks .hint').after(el('p', { class: 'hint', id: 'mask-hint', text: 'Allowed: ' + mh }));
}

function value(input) {
  const key = input.dataset.key, o = orig[key];
  if (input.dataset.kind === 'checkbox') return input.checked;
  if (input.dataset.kind === 'number' || typeof o === 'number') {
    if (input.value.trim() === '') throw new Error(key + ': enter a number.');
    const n = Number(input.value);
    if (!isFinite(n)) throw new Error(key + ': "' + input.value + '" is not a number.');
    return n;
  }
  if (o !== null && typeof o === 'object') {
    try { return JSON.parse(input.value); } catch (e) { throw new Error(key + ': not valid JSON.'); }
  }
  return input.value;
}

function changes() {
  const out = {};
  for (const input of fields.querySelectorAll('[data-key]')) {
    const v = value(input);
    if (JSON.stringify(v) !== JSON.stringify(orig[input.dataset.key])) out[input.dataset.key] = v;
  }
  const m = masks.map((r) => r.map((x) => Math.round(x * 10000) / 10000));
  if (JSON.stringify(m) !== JSON.stringify(readMasks(orig[MASK_KEY]))) out[MASK_KEY] = m;
  return out;
}

function report(err, ok) {
  errBox.textContent = err || ''; errBox.hidden = !err;
  okBox.textContent = ok || ''; okBox.hidden = !ok;
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  let body;
  try { body = changes(); } catch (e) { report(e.message); return; }
  if (!Object.keys(body).length) { report('', 'Nothing changed.'); return; }
  const btn = $('#save');
  btn.disabled = true;
  report('', 'Saving…');
  try {
    const r = await api('PUT', '/api/settings', { settings: body });
    orig = Object.assign({}, orig, body, (r && r.settings) || {});
    build();
    const later = (r && r.need_restart) || [];
    report('', later.length ? 'Saved. [' + later.join('], [') + '] take effect after a restart (systemctl restart kioskcam on the board).'
      : 'Saved and applied.');
  } catch (e) {
    report(e.message);
  } finally { btn.disabled = false; }
});
form.addEventListener('input', () => { if (!okBox.hidden) report(''); });
$('#reset').addEventListener('click', () => { build(); report(''); });

// ---------- motion masks ----------
const wrap = $('#mask-wrap'), still = $('#mask-still'), canvas = $('#mask-canvas'), ctx = canvas.getContext('2d');
let drag = null;

function readMasks(v) {
  if (!Array.isArray(v)) return [];
  return v.map((r) => (Array.isArray(r) ? r : r && typeof r === 'object' ? [r.x, r.y, r.w ?? r.width, r.h ?? r.height] : null))
    .filter((r) => r && r.length === 4 && r.every((x) => typeof x === 'number' && isFinite(x)))
    .map((r) => r.map(Number));
}

function drawMasks() {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  const all = drag ? masks.concat([norm(drag)]) : masks;
  all.forEach(([x, y, mw, mh], i) => {
    const live = drag && i === all.length - 1;
    ctx.fillStyle = live ? 'rgba(255,196,0,0.35)' : 'rgba(220,40,40,0.38)';
    ctx.strokeStyle = live ? '#ffc400' : '#ff5a5a';
    ctx.lineWidth = 2;
    ctx.fillRect(x * w, y * h, mw * w, mh * h);
    ctx.strokeRect(x * w + 1, y * h + 1, Math.max(0, mw * w - 2), Math.max(0, mh * h - 2));
  });
  $('#mask-count').textContent = masks.length ? masks.length + (masks.length === 1 ? ' mask' : ' masks') : 'No masks';
}

function norm(d) {
  const x = Math.min(d.x0, d.x1), y = Math.min(d.y0, d.y1);
  return [x, y, Math.abs(d.x1 - d.x0), Math.abs(d.y1 - d.y0)];
}
function point(ev) {
  const b = canvas.getBoundingClientRect();
  const c = (v) => Math.max(0, Math.min(1, v));
  return [c((ev.clientX - b.left) / b.width), c((ev.clientY - b.top) / b.height)];
}
canvas.addEventListener('pointerdown', (ev) => {
  ev.preventDefault();
  canvas.setPointerCapture(ev.pointerId);
  const [x, y] = point(ev);
  drag = { x0: x, y0: y, x1: x, y1: y };
  drawMasks();
});
canvas.addEventListener('pointermove', (ev) => {
  if (!drag) return;
  [drag.x1, drag.y1] = point(ev);
  drawMasks();
});
function endDrag(ev, keep) {
  if (!drag) return;
  if (keep) [drag.x1, drag.y1] = point(ev);
  const r = norm(drag);
  drag = null;
  if (keep && r[2] > 0.01 && r[3] > 0.01) { masks.push(r); report(''); }
  drawMasks();
}
canvas.addEventListener('pointerup', (ev) => endDrag(ev, true));
canvas.addEventListener('pointercancel', (ev) => endDrag(ev, false));
$('#mask-undo').addEventListener('click', () => { masks.pop(); drawMasks(); report(''); });
$('#mask-clear').addEventListener('click', () => { masks = []; drawMasks(); report(''); });

function loadStill() {
  $('#mask-nopic').hidden = true;
  still.src = '/api/snapshot.jpg?t=' + Date.now();
}
still.addEventListener('load', () => {
  $('#mask-nopic').hidden = true;
  if (still.naturalWidth && still.naturalHeight) wrap.style.aspectRatio = still.naturalWidth + ' / ' + still.naturalHeight;
  requestAnimationFrame(drawMasks);
});
still.addEventListener('error', () => { $('#mask-nopic').hidden = false; requestAnimationFrame(drawMasks); });
$('#mask-refresh').addEventListener('click', loadStill);
window.addEventListener('resize', drawMasks);
if (window.ResizeObserver) new ResizeObserver(() => drawMasks()).observe(canvas);

// ---------- start ----------
initShell().then(async (me) => {
  if (me.role !== 'admin') { say('Admin only: ask an admin to change the settings.'); return; }
  try {
    const r = await api('GET', '/api/settings');
    orig = (r && r.settings) || {};
    schema = (r && r.schema) || {};
  } catch (e) { say(e.status === 403 ? 'Admin only.' : e.message); return; }
  say('');
  form.hidden = false;
  build();
  loadStill();
}).catch((e) => say(e.message));
