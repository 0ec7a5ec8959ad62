/**
 * The console's only script and style sheet, served by baton itself (`/assets/…`) so the
 * Content-Security-Policy can forbid every other origin and every inline script. The script keeps
 * a page live: on a Server-Sent Event about a run the page shows, it fetches the page again and
 * swaps its `<main>`, keeping the `<details>` the reader opened.
 */

/** `/assets/console.js`. */
export const CONSOLE_JS = `'use strict';
(function () {
  var main = document.querySelector('main');
  if (!main || !main.hasAttribute('data-live')) return;
  var watch = main.getAttribute('data-live');
  var url = '/events' + (watch ? '?run=' + encodeURIComponent(watch) : '');
  var source = new EventSource(url);
  var busy = false;
  var again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, 'text/html');
        var next = doc.querySelector('main');
        var current = document.querySelector('main');
        if (!next || !current) return;
        var open = {};
        current.querySelectorAll('details[id]').forEach(function (d) { if (d.open) open[d.id] = true; });
        current.replaceWith(next);
        next.querySelectorAll('details[id]').forEach(function (d) { if (open[d.id]) d.open = true; });
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  source.addEventListener('run', function (e) {
    if (!watch || e.data === watch) refresh();
  });
})();
`;

/** `/assets/console.css`: readable on a phone, contrast at least 4.5:1 (WCAG AA) for text. */
export const CONSOLE_CSS = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --line: #d0d0d0;
  --ok: #0b6b2b; --bad: #a4161a; --warn: #7a4d00; --link: #0b4f9c; --add: #e6f4ea; --del: #fbe9eb; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 4px; }
header.top { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 8px 16px; border-bottom: 1px solid var(--line); }
header.top strong { margin-right: auto; }
header.top form { margin: 0; }
main { padding: 12px 16px; max-width: 1200px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.task { max-width: 40ch; overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
.status-completed { color: var(--ok); } .status-failed, .status-blocked, .status-node_lost { color: var(--bad); }
.status-running, .status-starting, .status-queued { color: var(--warn); }
.counts { display: flex; flex-wrap: wrap; gap: 8px 16px; padding: 0; list-style: none; }
form.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
form.filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
ol.transcript { list-style: none; padding: 0; }
ol.transcript > li { border-left: 3px solid var(--line); padding: 4px 8px; margin: 6px 0; }
li.message { border-color: var(--link) !important; white-space: pre-wrap; overflow-wrap: anywhere; }
li.failed { border-color: var(--bad) !important; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6; padding: 6px; margin: 4px 0; }
code { overflow-wrap: anywhere; }
.diff { font: 13px/1.35 ui-monospace, monospace; white-space: pre; overflow-x: auto; background: #fafafa; padding: 6px; }
.diff .add { background: var(--add); display: block; } .diff .del { background: var(--del); display: block; }
.diff .hunk { color: var(--link); display: block; } .diff .file { font-weight: bold; display: block; margin-top: 8px; }
.diff .ctx { display: block; }
button { font: inherit; padding: 3px 10px; }
.muted { color: var(--muted); }
`;
