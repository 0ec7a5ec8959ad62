/**
 * Who may use the console: one-time login tokens (printed by `baton console`) exchanged for a
 * session, and the sessions themselves, each with its CSRF token. Held in this process's memory
 * only, as SHA-256 hashes: a restart logs everyone out, and a leaked memory dump of the map holds
 * no usable cookie.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a login link works, in ms. */
export const LOGIN_TOKEN_TTL_MS = 10 * 60_000;
/** How long a session lasts after its login, in ms. */
export const SESSION_TTL_MS = 12 * 3600_000;

/** A signed-in browser. */
export interface ConsoleSession {
  /** Echoed in every state-changing form (`csrf` field) and checked against this. */
  csrfToken: string;
  expiresAtMs: number;
  /**
   * Answers to the forms this session sent, by the id the redirect after the form names
   * (`?said=ID`): a page reloaded by a live update still shows its answer. The newest few only.
   */
  said: Map<string, string>;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const newToken = (): string => randomBytes(32).toString('base64url');

/** The login tokens and sessions of one console. */
export class ConsoleSessions {
  private readonly logins = new Map<string, number>();
  private readonly sessions = new Map<string, ConsoleSession>();

  /** @param nowMs the clock (ms since the epoch); tests hand in a manual one. */
  constructor(private readonly nowMs: () => number) {}

  /** A new one-time login token, valid for {@link LOGIN_TOKEN_TTL_MS}. */
  mintLogin(): string {
    this.sweep();
    const token = newToken();
    this.logins.set(sha256(token), this.nowMs() + LOGIN_TOKEN_TTL_MS);
    return token;
  }

  /**
   * Spends a login token: a known, unexpired one becomes a session (and never works again).
   *
   * @returns the session id for the cookie, or undefined for an unknown, used or expired token.
   */
  redeem(token: string): string | undefined {
    const key = sha256(token);
    const expiresAtMs = this.logins.get(key);
    this.logins.delete(key);
    if (expiresAtMs === undefined || expiresAtMs <= this.nowMs()) return undefined;
    const sessionId = newToken();
    this.sessions.set(sha256(sessionId), {
      csrfToken: newToken(),
      expiresAtMs: this.nowMs() + SESSION_TTL_MS,
      said: new Map(),
    });
    return sessionId;
  }

  /** The live session of cookie value `sessionId`, or undefined (unknown, forged or expired). */
  session(sessionId: string | undefined): ConsoleSession | undefined {
    if (!sessionId) return undefined;
    const key = sha256(sessionId);
    const found = this.sessions.get(key);
    if (!found) return undefined;
    if (found.expiresAtMs <= this.nowMs()) {
      this.sessions.delete(key);
      return undefined;
    }
    return found;
  }

  /** Ends the session of `sessionId` (logout). */
  end(sessionId: string | undefined): void {
    if (sessionId) this.sessions.delete(sha256(sessionId));
  }

  /** Drops expired entries, so minting links without using them cannot grow the maps forever. */
  private sweep(): void {
    const now = this.nowMs();
    for (const [key, at] of this.logins) if (at <= now) this.logins.delete(key);
    for (const [key, s] of this.sessions) if (s.expiresAtMs <= now) this.sessions.delete(key);
  }
}

/** Whether `given` is the session's CSRF token (constant time). */
export function csrfMatches(session: ConsoleSession, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(session.csrfToken);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Answers a session keeps for `?said=ID`. */
const MAX_SAID = 20;

/** Keeps `text` as an answer of `session`; @returns the id for `?said=`. */
export function rememberAnswer(session: ConsoleSession, text: string): string {
  const id = randomBytes(6).toString('hex');
  session.said.set(id, text);
  for (const key of session.said.keys()) {
    if (session.said.size <= MAX_SAID) break;
    session.said.delete(key);
  }
  return id;
}

/** The answer `?said=ID` names, when this session has it. */
export function answerOf(session: ConsoleSession, id: string | null): string | undefined {
  return id === null ? undefined : session.said.get(id);
}
