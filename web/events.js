// Events page: days -> event cards (snapshot, triggers, time, duration) -> clip viewer.
import { api, initShell, fmtSecs, fmtDate, timeOf, isDate, el, icon, showError, param, setQuery, $ } from '/static/common.js';

const daysEl = $('#days'), list = $('#events'), msg = $('#ev-msg'), title = $('#title'), back = $('#back');
const viewer = $('#viewer'), media = $('#viewer-media');
let curDate = null;

function say(text) { msg.textContent = text || ''; msg.hidden = !text; }

async function showDays() {
  curDate = null;
  title.textContent = 'Events';
  document.title = 'Events · KioskCam';
  back.hidden = true; list.hidden = true; daysEl.hidden = false;
  say('Loading…');
  let days = [];
  try { const r = await api('GET', '/api/events'); days = (r && r.days) || []; } catch (e) { say(e.message); return; }
  if (curDate) return;
  daysEl.replaceChildren(...days.map((d) => {
    const date = typeof d === 'string' ? d : d.date;
    return el('li', null, el('button', { class: 'day', type: 'button', dataset: { date }, onclick: () => { setQuery({ date }, true); route(); } },
      el('span', { class: 'day-name', text: fmtDate(date) }),
      d.count != null ? el('span', { class: 'day-count', text: d.count + ' events' }) : el('span', { class: 'day-count', text: '›' })));
  }));
  say(days.length ? '' : 'No events yet.');
}

async function showDay(date) {
  curDate = date;
  title.textContent = fmtDate(date);
  document.title = fmtDate(date) + ' · Events · KioskCam';
  back.hidden = false; daysEl.hidden = true; list.hidden = false;
  list.replaceChildren();
  say('Loading…');
  let events = [];
  try {
    const r = await api('GET', '/api/events?date=' + encodeURIComponent(date));
    if (curDate !== date) return;
    events = (r && r.events) || [];
  } catch (e) { say(e.message); return; }
  list.replaceChildren(...events.map(card));
  say(events.length ? '' : 'No events on this day.');
}

function card(ev) {
  const triggers = ev.triggers && ev.triggers.length ? ev.triggers : ['event'];
  const pic = ev.snapshot
    ? el('img', { src: ev.snapshot, alt: '', loading: 'lazy', decoding: 'async' })
    : el('span', { class: 'nopic' }, icon('event'));
  const thumb = el('div', { class: 'thumb' }, pic,
    ev.seconds != null ? el('span', { class: 'dur-badge', text: fmtSecs(ev.seconds) }) : null,
    ev.clip ? null : el('span', { class: 'kind-badge nc', text: 'no clip' }));
  if (ev.snapshot) pic.addEventListener('error', () => thumb.classList.add('noimg'));
  const label = 'Event at ' + timeOf(ev.start) + ', ' + triggers.join(', ') + (ev.seconds != null ? ', ' + fmtSecs(ev.seconds) : '');
  return el('button', { class: 'event-card card', type: 'button', 'aria-label': label,
    dataset: { clip: ev.clip || '', start: ev.start || '' }, onclick: () => open(ev) },
  thumb,
  el('span', { class: 'ev-body' },
    el('span', { class: 'ev-time', text: timeOf(ev.start) }),
    el('span', { class: 'chips' }, ...triggers.map((t) => el('span', { class: 'chip', text: t }))),
    el('span', { class: 'ev-meta muted', text: [ev.seconds != null ? fmtSecs(ev.seconds) : '', ev.peak != null ? 'peak ' + Number(ev.peak).toFixed(2) : ''].filter(Boolean).join(' · ') })));
}

function open(ev) {
  stop();
  $('#viewer-title').textContent = 'Event ' + timeOf(ev.start);
  $('#viewer-info').textContent = [fmtDate(curDate), (ev.triggers || []).join(', '), ev.seconds != null ? fmtSecs(ev.seconds) : ''].filter(Boolean).join(' · ');
  const dl = $('#download');
  if (ev.clip) {
    media.replaceChildren(el('video', { id: 'clip', controls: true, autoplay: true, playsinline: true, preload: 'metadata', src: ev.clip, poster: ev.snapshot || null }));
    dl.href = ev.clip; dl.setAttribute('download', ev.clip.split('/').pop()); dl.hidden = false;
  } else {
    media.replaceChildren(ev.snapshot ? el('img', { class: 'photo-full', src: ev.snapshot, alt: 'Event snapshot' }) : el('p', { class: 'muted', text: 'This event has no clip.' }));
    dl.hidden = true;
  }
  if (viewer.showModal) viewer.showModal(); else viewer.setAttribute('open', '');
}

function stop() {
  const v = media.querySelector('video');
  if (v) { v.pause(); v.removeAttribute('src'); v.load(); }
  media.replaceChildren();
}
function close() { if (viewer.open) { if (viewer.close) viewer.close(); else viewer.removeAttribute('open'); } }
viewer.addEventListener('close', stop);
viewer.addEventListener('click', (e) => { if (e.target === viewer) close(); });
$('#viewer-close').addEventListener('click', close);

function route() {
  close();
  const date = param('date');
  if (isDate(date)) showDay(date); else showDays();
}
back.addEventListener('click', () => { setQuery({}, true); route(); });
window.addEventListener('popstate', route);

initShell().then(route).catch((e) => { say(e.message); showError(e); });
