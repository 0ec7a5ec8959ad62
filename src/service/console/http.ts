/**
 * The console's HTTP plumbing: security headers on every answer, the session cookie, bounded form
 * bodies, and the same-origin check of state-changing requests.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Html } from './html.js';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'baton_console';

/**
 * The Content-Security-Policy of every page: nothing but baton's own scripts, styles and
 * connections, no inline script or style, no framing, forms post only back to baton.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** Headers every console answer carries. */
export function securityHeaders(): Record<string, string> {
  return {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
}

/** Sends a page. */
export function sendHtml(res: ServerResponse, status: number, page: Html, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...securityHeaders(), 'content-type': 'text/html; charset=utf-8', ...extra }).end(page.text);
}

/** Sends plain text (errors, refusals). */
export function sendText(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res
    .writeHead(status, { ...securityHeaders(), 'content-type': 'text/plain; charset=utf-8', ...extra })
    .end(`${text}\n`);
}

/** A 303 to `location` (a path of this console). */
export function redirect(res: ServerResponse, location: string, extra: Record<string, string> = {}): void {
  res.writeHead(303, { ...securityHeaders(), location, ...extra }).end();
}

/** The value of cookie `name` in the request, or undefined. */
export function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of String(req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` of a session: not readable by scripts, never sent by another site's request. */
export function sessionCookie(value: string, maxAgeMs: number): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.floor(maxAgeMs / 1000)}`;
}

/** `Set-Cookie` that removes the session cookie. */
export function clearedCookie(): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0`;
}

/** Largest form body the console reads, in bytes. */
const FORM_MAX_BYTES = 64 * 1024;

/**
 * Reads an `application/x-www-form-urlencoded` body.
 *
 * @returns the fields, or undefined when the body is too large or of another type.
 */
export function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve) => {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    if (type !== 'application/x-www-form-urlencoded') {
      req.resume();
      resolve(undefined);
      return;
    }
    let body = '';
    let tooLarge = false;
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > FORM_MAX_BYTES) tooLarge = true;
    });
    req.on('end', () => resolve(tooLarge ? undefined : new URLSearchParams(body)));
    req.on('error', () => resolve(undefined));
  });
}

/**
 * Whether a state-changing request comes from a page of this console: its `Origin` (or, when a
 * browser sent none, its `Sec-Fetch-Site`) must name this very host. A form on another site, even
 * one on another port of 127.0.0.1, fails here before its CSRF token is looked at.
 */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (typeof origin === 'string') return host !== undefined && origin === `http://${host}`;
  return req.headers['sec-fetch-site'] === 'same-origin';
}

/**
 * Whether the `Host` header names a host this console answers for: a page served to a browser
 * that reached baton through another name (DNS rebinding) must not run as baton's origin.
 */
export function hostAllowed(req: IncomingMessage, allowedHosts: ReadonlySet<string>): boolean {
  const host = req.headers.host;
  return host !== undefined && allowedHosts.has(host.toLowerCase());
}
