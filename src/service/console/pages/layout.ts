/** The frame of every console page: navigation, the sign-out form, the live script. */
import { CONSOLE_NAV } from '../../../wording/console.js';
import { html, type Html } from '../html.js';

/** What a page hands the frame. */
export interface PageFrame {
  title: string;
  /** The session's CSRF token, for the sign-out form; absent on pages shown before a session. */
  csrf?: string;
  /** `data-live` of `<main>`: '' reloads on any run event, a run id on that run's only; absent: static. */
  live?: string;
}

/** A whole HTML document around `body`. */
export function layout(frame: PageFrame, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · ${CONSOLE_NAV.product}</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#content">${CONSOLE_NAV.skip}</a>
<header class="top">
<strong>${CONSOLE_NAV.product}</strong>
${
  frame.csrf === undefined
    ? ''
    : html`<nav aria-label="Main"><a href="/runs">${CONSOLE_NAV.runs}</a> · <a href="/approvals">${CONSOLE_NAV.approvals}</a></nav>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="${frame.csrf}"><button type="submit">${CONSOLE_NAV.logout}</button></form>`
}
</header>
<main id="content"${frame.live === undefined ? '' : html` data-live="${frame.live}"`}>
<h1>${frame.title}</h1>
${body}
</main>
</body>
</html>
`;
}

/** A duration in ms as `1h 02m`, `3m 05s` or `12s`. */
export function formatDurationMs(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** A time as `2026-12-04 02:10:05Z` (UTC, to the second). */
export function formatTime(date: Date | null | undefined): string {
  return date ? `${date.toISOString().slice(0, 19).replace('T', ' ')}Z` : '—';
}
