// Library page: days -> grid of recordings -> viewer (play, download, delete, trim & export).
import { api, initShell, fmtBytes, fmtSecs, fmtDate, timeOf, isDate, el, icon, toast, showError, param, setQuery, $ } from '/static/common.js';

const daysEl = $('#days'), grid = $('#grid'), msg = $('#lib-msg'), title = $('#title'), back = $('#back');
const viewer = $('#viewer'), media = $('#viewer-media');
let recs = [], curDate = null, cur = null, isAdmin = false, dayList = [];

function say(text) { msg.textContent = text || ''; msg.hidden = !text; }

const KIND_LABEL = { video: 'Video', audio: 'Sound', photo: 'Photo', screen: 'Screen' };
const playable = (k) => k === 'video' || k === 'audio' || k === 'screen';

// ---------- days ----------
async function showDays() {
  curDate = null;
  title.textContent = 'Library';
  document.title = 'Library · KioskCam';
  back.hidden = true; grid.hidden = true; daysEl.hidden = false;
  say(dayList.length ? '' : 'Loading…');
  try {
    const r = await api('GET', '/api/library');
    dayList = (r && r.days) || [];
  } catch (e) { say(e.message); return; }
  if (curDate) return; // the user moved on meanwhile
  daysEl.replaceChildren(...dayList.map((d) => el('li', null,
    el('button', { class: 'day', type: 'button', dataset: { date: d.date }, onclick: () => go(d.date) },
      el('span', { class: 'day-name', text: fmtDate(d.date) }),
      el('span', { class: 'day-count', text: d.count + (d.count === 1 ? ' recording' : ' recordings') })))));
  say(dayList.length ? '' : 'No recordings yet.');
}

function go(date) { setQuery({ date }, true); route(); }

// ---------- one day ----------
async function showDay(date, openFile, openKind) {
  curDate = date;
  title.textContent = fmtDate(date);
  document.title = fmtDate(date) + ' · Library · KioskCam';
  back.hidden = false; daysEl.hidden = true; grid.hidden = false;
  grid.replaceChildren();
  say('Loading…');
  try {
    const r = await api('GET', '/api/library?date=' + encodeURIComponent(date));
    if (curDate !== date) return;
    recs = (r && r.recordings) || [];
  } catch (e) { say(e.message); recs = []; }
  renderGrid();
  if (openFile) {
    let rec = recs.find((x) => x.name === openFile && (!openKind || x.kind === openKind));
    if (!rec && openKind) {
      const url = '/media/' + openKind + '/' + date + '/' + openFile;
      rec = { kind: openKind, name: openFile, start: '', seconds: null, bytes: null, url, thumbnail: '/thumbs/' + openKind + '/' + date + '/' + openFile, event: false, trigger: null };
    }
    if (rec) openViewer(rec);
  }
}

function renderGrid() {
  grid.replaceChildren(...recs.map(card));
  say(recs.length ? '' : 'Nothing recorded on this day.');
}

function card(r) {
  const img = el('img', { src: r.thumbnail, alt: '', loading: 'lazy', decoding: 'async' });
  img.addEventListener('error', () => thumb.classList.add('noimg'));
  const thumb = el('div', { class: 'thumb thumb-' + r.kind }, img,
    el('span', { class: 'kind-badge' }, icon(r.kind === 'screen' ? 'screen' : r.kind, KIND_LABEL[r.kind] || r.kind)),
    r.event ? el('span', { class: 'event-badge' }, icon('event'), r.trigger || 'event') : null,
    r.seconds != null ? el('span', { class: 'dur-badge', text: fmtSecs(r.seconds) }) : null);
  const label = (KIND_LABEL[r.kind] || r.kind) + ' ' + timeOf(r.start) + (r.seconds != null ? ', ' + fmtSecs(r.seconds) : '') + (r.event ? ', event' : '');
  return el('button', { class: 'item', type: 'button', 'aria-label': label, dataset: { url: r.url, kind: r.kind, name: r.name }, onclick: () => openViewer(r) },
    thumb,
    el('span', { class: 'item-meta' },
      el('span', { class: 'item-time', text: timeOf(r.start) || r.name }),
      el('span', { class: 'item-size', text: r.bytes != null ? fmtBytes(r.bytes) : '' })));
}

// ---------- viewer ----------
let raf = 0;
function openViewer(r) {
  cur = r;
  stopMedia();
  $('#viewer-title').textContent = (KIND_LABEL[r.kind] || r.kind) + ' ' + (timeOf(r.start) || r.name);
  const info = [fmtDate(curDate), r.name];
  if (r.seconds != null) info.push(fmtSecs(r.seconds));
  if (r.bytes != null) info.push(fmtBytes(r.bytes));
  if (r.event) info.push('event' + (r.trigger ? ': ' + r.trigger : ''));
  $('#viewer-info').textContent = info.join(' · ');
  let player = null;
  if (r.kind === 'photo') {
    media.replaceChildren(el('img', { class: 'photo-full', src: r.url, alt: 'Photo ' + timeOf(r.start) }));
  } else if (r.kind === 'audio') {
    player = el('audio', { id: 'player', controls: true, preload: 'metadata', src: r.url });
    const head = el('div', { class: 'playhead' });
    const wave = el('div', { class: 'wave', title: 'Tap to seek' }, el('img', { src: r.thumbnail, alt: 'Waveform' }), head);
    wave.addEventListener('click', (ev) => {
      const box = wave.getBoundingClientRect();
      if (player.duration) player.currentTime = ((ev.clientX - box.left) / box.width) * player.duration;
    });
    const move = () => {
      const d = player.duration || r.seconds || 0;
      head.style.left = (d ? Math.min(100, (player.currentTime / d) * 100) : 0) + '%';
      if (!player.paused) raf = requestAnimationFrame(move);
    };
    player.addEventListener('play', () => { cancelAnimationFrame(raf); raf = requestAnimationFrame(move); });
    player.addEventListener('timeupdate', move);
    player.addEventListener('seeked', move);
    media.replaceChildren(wave, player);
  } else {
    player = el('video', { id: 'player', controls: true, playsinline: true, preload: 'metadata', src: r.url });
    media.replaceChildren(player);
  }
  const dl = $('#download');
  dl.href = r.url;
  dl.setAttribute('download', r.name);
  // trim & export
  const trim = $('#trim');
  trim.hidden = !isAdmin || !playable(r.kind);
  $('#trim-from').value = 0;
  $('#trim-to').value = r.seconds != null ? Number(r.seconds).toFixed(1) : '';
  $('#export-result').replaceChildren();
  if (player) player.addEventListener('loadedmetadata', () => {
    if ($('#trim-to').value === '' && isFinite(player.duration)) $('#trim-to').value = player.duration.toFixed(1);
  });
  $('#delete').hidden = !isAdmin;
  setQuery({ date: curDate, file: r.name, kind: r.kind });
  if (!viewer.open) { if (viewer.showModal) viewer.showModal(); else viewer.setAttribute('open', ''); }
}

function stopMedia() {
  cancelAnimationFrame(raf);
  const p = media.querySelector('video, audio');
  if (p) { p.pause(); p.removeAttribute('src'); p.load(); }
  media.replaceChildren();
}

function closeViewer() { if (viewer.open) { if (viewer.close) viewer.close(); else viewer.removeAttribute('open'); } }
viewer.addEventListener('close', () => { stopMedia(); cur = null; if (curDate) setQuery({ date: curDate }); });
$('#viewer-close').addEventListener('click', closeViewer);
viewer.addEventListener('click', (ev) => { if (ev.target === viewer) closeViewer(); }); // tap on the backdrop

function curTime() { const p = $('#player'); return p ? p.currentTime.toFixed(1) : '0'; }
$('#set-from').addEventListener('click', () => { $('#trim-from').value = curTime(); });
$('#set-to').addEventListener('click', () => { $('#trim-to').value = curTime(); });

$('#trim').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!cur) return;
  const out = $('#export-result');
  const from = Number($('#trim-from').value), to = Number($('#trim-to').value);
  if (!isFinite(from) || !isFinite(to) || $('#trim-to').value === '' || from < 0 || to <= from) {
    out.replaceChildren(el('span', { class: 'form-error', text: '"To" must be after "From".' }));
    return;
  }
  const file = cur.url.replace(/^\/media\//, '');
  const btn = $('#export');
  btn.disabled = true;
  out.replaceChildren('Exporting…');
  try {
    const r = await api('POST', '/api/export', { file, from, to });
    const name = r && r.url ? r.url.split('/').pop() : 'export';
    out.replaceChildren('Exported: ', el('a', { href: r.url, download: name, text: name }), ' · ',
      el('a', { href: r.url, target: '_blank', text: 'Open' }));
    refreshDay();
  } catch (e) {
    out.replaceChildren(el('span', { class: 'form-error', text: e.message }));
  } finally { btn.disabled = false; }
});

async function refreshDay() {
  if (!curDate) return;
  try {
    const r = await api('GET', '/api/library?date=' + encodeURIComponent(curDate));
    recs = (r && r.recordings) || [];
    renderGrid();
  } catch (e) { /* keep the old grid */ }
}

$('#delete').addEventListener('click', async () => {
  if (!cur) return;
  const r = cur;
  if (!confirm('Delete ' + (KIND_LABEL[r.kind] || r.kind).toLowerCase() + ' ' + (timeOf(r.start) || r.name) + '? This cannot be undone.')) return;
  try {
    await api('DELETE', r.url);
    recs = recs.filter((x) => x.url !== r.url);
    const item = [...grid.querySelectorAll('.item')].find((x) => x.dataset.url === r.url);
    if (item) item.remove();
    const day = dayList.find((d) => d.date === curDate);
    if (day) day.count = Math.max(0, day.count - 1);
    if (!recs.length) say('Nothing recorded on this day.');
    closeViewer();
    toast('Deleted.');
  } catch (e) { showError(e); }
});

// ---------- routing ----------
back.addEventListener('click', () => { setQuery({}, true); route(); });
window.addEventListener('popstate', route);

function route() {
  const date = param('date');
  if (isDate(date)) {
    const file = param('file'), kind = param('kind');
    if (date === curDate && !file) { closeViewer(); return; }
    closeViewer();
    showDay(date, file, kind);
  } else {
    closeViewer();
    showDays();
  }
}

initShell().then((me) => { isAdmin = me.role === 'admin'; route(); }).catch((e) => { say(e.message); });
