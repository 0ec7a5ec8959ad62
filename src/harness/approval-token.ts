/** The per-run approval token: made at launch, kept as its SHA-256 on the run row. */
import { createHash, randomBytes } from 'node:crypto';

/** A fresh per-run token and its SHA-256 (hex), which the run row keeps. */
export function newApprovalToken(): { token: string; sha256: string } {
  const token = randomBytes(24).toString('hex');
  return { token, sha256: sha256Hex(token) };
}

/** The SHA-256 of `text`, as lowercase hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
