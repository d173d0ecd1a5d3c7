// Live page: MSE player fed by the /api/live WebSocket, status overlay, admin controls.
import { api, initShell, fmtBytes, fmtSecs, toast, showError, $ } from '/static/common.js';

const video = $('#live');
const msg = $('#live-msg');
const DEFAULT_MIME = 'video/mp4; codecs="avc1.64001f, mp4a.40.2"';

function setState(state, text) {
  document.body.dataset.liveState = state;
  msg.textContent = text || '';
  msg.hidden = state === 'playing' || !text;
}

// ---------- player ----------
const MS = window.MediaSource || window.ManagedMediaSource;
let ws = null, ms = null, sb = null, objUrl = null;
let queue = [], mime = null, retry = 0, retryTimer = 0, watchdog = 0, gen = 0;

function teardown() {
  clearTimeout(watchdog);
  if (ws) { ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null; try { ws.close(); } catch (e) { /* closed */ } }
  ws = null; sb = null; queue = []; mime = null;
  if (ms && ms.readyState === 'open') { try { ms.endOfStream(); } catch (e) { /* ignore */ } }
  ms = null;
  if (objUrl) { URL.revokeObjectURL(objUrl); objUrl = null; }
}

function scheduleReconnect(reason) {
  teardown();
  clearTimeout(retryTimer);
  const delay = Math.min(10, 2 ** retry); // 1, 2, 4, 8, 10 s
  retry++;
  setState('error', (reason || 'Live picture lost.') + ' Reconnecting in ' + delay + ' s…');
  retryTimer = setTimeout(connect, delay * 1000);
}

function kick() {
  clearTimeout(watchdog);
  watchdog = setTimeout(() => scheduleReconnect('No picture for 10 s.'), 10000);
}

function connect() {
  teardown();
  const my = ++gen;
  setState('connecting', 'Connecting…');
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  try {
    ws = new WebSocket(proto + '//' + location.host + '/api/live');
  } catch (e) {
    scheduleReconnect('Cannot open the live connection.');
    return;
  }
  ws.binaryType = 'arraybuffer';
  kick();
  ws.onmessage = (ev) => {
    if (my !== gen) return;
    kick();
    if (typeof ev.data === 'string') {
      try {
        const info = JSON.parse(ev.data);
        if (info.mime && !ms) openSource(info.mime);
        if (info.width && info.height) video.dataset.size = info.width + 'x' + info.height;
      } catch (e) { /* not JSON: ignore */ }
      return;
    }
    if (!ms) openSource(DEFAULT_MIME); // no text message came first: assume the usual codecs
    queue.push(ev.data);
    pump();
  };
  ws.onclose = () => { if (my === gen) scheduleReconnect(); };
  ws.onerror = () => { if (my === gen) scheduleReconnect(); };
}

function openSource(type) {
  mime = type;
  if (MS.isTypeSupported && !MS.isTypeSupported(type)) {
    // Try video only (some browsers lack AAC in MSE).
    const v = /avc1\.[0-9a-fA-F]+/.exec(type);
    const alt = v ? 'video/mp4; codecs="' + v[0] + '"' : null;
    if (alt && MS.isTypeSupported(alt)) mime = alt;
    else { teardown(); clearTimeout(retryTimer); setState('error', 'This browser cannot play the live format (' + type + ').'); return; }
  }
  ms = new MS();
  const mine = ms;
  objUrl = URL.createObjectURL(ms);
  video.src = objUrl;
  ms.addEventListener('sourceopen', () => {
    if (mine !== ms) return;
    try {
      sb = ms.addSourceBuffer(mime);
      sb.mode = 'segments';
      sb.addEventListener('updateend', () => { chase(); pump(); });
      sb.addEventListener('error', () => scheduleReconnect('The player failed.'));
    } catch (e) {
      teardown();
      setState('error', 'This browser cannot play the live format.');
      return;
    }
    pump();
  });
}

let wantTrim = false;
function pump() {
  if (!sb || !ms || ms.readyState !== 'open' || sb.updating) return;
  try {
    if (wantTrim) {
      wantTrim = false;
      const b = sb.buffered;
      if (b.length && video.currentTime - b.start(0) > 30) {
        sb.remove(b.start(0), video.currentTime - 30);
        return;
      }
    }
    if (queue.length) sb.appendBuffer(queue.shift());
  } catch (e) {
    if (e.name === 'QuotaExceededError') {
      const b = sb.buffered;
      if (b.length && video.currentTime - b.start(0) > 2) { try { sb.remove(b.start(0), video.currentTime - 1); } catch (e2) { /* ignore */ } }
      else queue.shift();
    } else scheduleReconnect('The player failed.');
  }
}

// Keep latency low. Fragments are one picture each (and the sound before it), so the
// newest data is at most a frame old. A browser starts playing wherever its buffer stood
// and then keeps that distance for good (half a second in Chromium, measured by
// scripts/bench-web-latency): so play a little faster while more than LIVE_BEHIND seconds
// behind the newest picture, and jump when more than a second behind (a stall, a
// background tab). Buffer older than 30 s is trimmed.
const LIVE_BEHIND = 0.12;
function chase() {
  if (!sb) return;
  const b = sb.buffered;
  if (!b.length) return;
  const end = b.end(b.length - 1);
  const t = video.currentTime;
  const behind = end - t;
  if (!video.seeking && (t < b.start(0) || behind > 1.0)) {
    video.currentTime = Math.max(b.start(b.length - 1), end - LIVE_BEHIND);
  } else {
    const rate = behind > 0.5 ? 1.25 : behind > 0.2 ? 1.1 : behind > LIVE_BEHIND ? 1.03 : 1.0;
    if (video.playbackRate !== rate) video.playbackRate = rate;
  }
  if (t - b.start(0) > 30) wantTrim = true;
  if (video.paused) video.play().catch(() => { /* autoplay refused: user taps */ });
}

video.addEventListener('playing', () => { retry = 0; setState('playing'); });
video.addEventListener('error', () => { if (ms) scheduleReconnect('The player failed.'); });
video.addEventListener('click', () => { if (video.paused) video.play().catch(() => {}); });
document.addEventListener('visibilitychange', () => { if (!document.hidden) chase(); });

function startHls() {
  setState('connecting', 'Connecting…');
  video.src = '/api/live.m3u8';
  video.addEventListener('error', () => setState('error', 'The live view could not start in this browser.'));
  video.play().catch(() => {});
}

if (MS) {
  if (window.ManagedMediaSource && !window.MediaSource) video.disableRemotePlayback = true;
  connect();
} else {
  startHls();
}

// ---------- unmute ----------
const unmute = $('#unmute');
function syncMute() {
  unmute.textContent = video.muted ? 'Unmute' : 'Mute';
  unmute.setAttribute('aria-label', video.muted ? 'Unmute' : 'Mute');
  unmute.setAttribute('aria-pressed', String(!video.muted));
}
unmute.addEventListener('click', () => {
  video.muted = !video.muted;
  if (!video.muted && video.paused) video.play().catch(() => {});
  syncMute();
});
syncMute();

// ---------- status overlay ----------
const recBadge = $('#rec-badge'), free = $('#free'), levelWrap = $('#level-wrap'), level = $('#level');
const btnRec = $('#btn-record'), btnSound = $('#btn-sound'), btnStill = $('#btn-still'), btnEvent = $('#btn-event');
let status = {};
let eventActive = false;
let busy = false;

// audio_levels may be a number, an array of numbers, or an object; values 0..1 or dBFS (<= 0).
function levelOf(v) {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) { const n = v.filter((x) => typeof x === 'number'); return n.length ? Math.max(...n.map(norm)) : levelOf(v[v.length - 1]); }
  if (typeof v === 'object') return levelOf(v.peak ?? v.rms ?? v.level ?? Object.values(v));
  if (typeof v === 'number') return norm(v);
  return null;
}
function norm(x) {
  if (x < 0) return Math.max(0, Math.min(1, (x + 60) / 60)); // dBFS -60..0
  return Math.max(0, Math.min(1, x > 1 ? x / 100 : x));
}

function render() {
  const s = status;
  const rec = s.state === 'recording' || s.state === 'starting' || s.state === 'stopping';
  recBadge.hidden = !rec;
  if (rec) {
    $('#rec-label').textContent = s.kind === 'audio' ? 'REC sound' : 'REC';
    $('#rec-time').textContent = fmtSecs(s.seconds_recorded || 0);
    $('#rec-size').textContent = s.bytes_written != null ? fmtBytes(s.bytes_written) : '';
  }
  free.hidden = s.free_bytes == null;
  if (s.free_bytes != null) free.textContent = fmtBytes(s.free_bytes) + ' free';
  const lv = levelOf(s.levels_peak_dbfs != null ? s.levels_peak_dbfs : s.audio_levels);
  levelWrap.hidden = lv === null;
  if (lv !== null) {
    level.style.transform = 'scaleX(' + lv.toFixed(3) + ')';
    level.classList.toggle('hot', lv > 0.9);
  }
  const recVideo = rec && s.kind !== 'audio', recAudio = rec && s.kind === 'audio';
  setBtn(btnRec, recVideo, 'Record', 'Stop video');
  setBtn(btnSound, recAudio, 'Sound', 'Stop sound');
  btnRec.disabled = busy || recAudio;
  btnSound.disabled = busy || recVideo;
  if (typeof s.event_active === 'boolean') eventActive = s.event_active;
  else if (s.event && typeof s.event === 'object' && typeof s.event.active === 'boolean') eventActive = s.event.active;
  setBtn(btnEvent, eventActive, 'Event', 'Stop event');
  btnEvent.disabled = busy;
  btnStill.disabled = busy;
  const line = [];
  if (s.camera) line.push('Camera: ' + s.camera);
  if (s.web && s.web.live_viewers != null) line.push(s.web.live_viewers + ' watching');
  $('#live-status').textContent = line.join(' · ');
}

function setBtn(b, on, offText, onText) {
  b.dataset.action = on ? 'stop' : 'start';
  b.classList.toggle('on', on);
  b.querySelector('.ctl-label').textContent = on ? onText : offText;
  b.setAttribute('aria-pressed', String(on));
}

let polling = false;
async function poll() {
  if (polling || document.hidden) return;
  polling = true;
  try { status = (await api('GET', '/api/status')) || {}; render(); } catch (e) { if (e.status !== 401) free.hidden = true; }
  finally { polling = false; }
}

// ---------- admin controls ----------
async function act(fn) {
  if (busy) return;
  busy = true; render();
  try { await fn(); } catch (e) { showError(e); }
  finally { busy = false; render(); poll(); }
}

btnRec.addEventListener('click', () => act(async () => {
  const action = btnRec.dataset.action;
  await api('POST', '/api/recording', { action, kind: 'video' });
  toast(action === 'start' ? 'Recording started' : 'Recording stopped');
}));
btnSound.addEventListener('click', () => act(async () => {
  const action = btnSound.dataset.action;
  await api('POST', '/api/recording', { action, kind: 'audio' });
  toast(action === 'start' ? 'Sound recording started' : 'Sound recording stopped');
}));
btnStill.addEventListener('click', () => act(async () => {
  const r = await api('POST', '/api/snapshot');
  toast('Photo saved.', r && r.url ? { href: r.url, text: 'Open photo', target: '_blank' } : null);
}));
btnEvent.addEventListener('click', () => act(async () => {
  const action = eventActive ? 'stop' : 'start';
  await api('POST', '/api/event', { action });
  eventActive = action === 'start';
  toast(action === 'start' ? 'Event started' : 'Event stopped');
}));

initShell().then(() => { poll(); setInterval(poll, 1000); }).catch(showError);
