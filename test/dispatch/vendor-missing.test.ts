/**
 * The refusal when a vendor CLI is missing: the service says to install it (with the README's
 * command) and restart; a one-off `baton ask` (config read per command) drops "when baton
 * started" and the restart, which mean nothing there.
 */
import { describe, expect, it } from 'vitest';
import { vendorMissingText, withoutRestart, withRestartHow } from '../../src/dispatch/dispatcher.js';

describe('vendor missing refusal', () => {
  it('gives the install command, and for ask neither "when baton started" nor a restart', () => {
    expect(withoutRestart(vendorMissingText('claude'))).toBe(
      'The claude CLI was not found on PATH. Install it: npm i -g @anthropic-ai/claude-code',
    );
    expect(withoutRestart(vendorMissingText('codex'))).toBe(
      'The codex CLI was not found on PATH. Install it: npm i -g @openai/codex',
    );
  });

  it('keeps the restart, saying how, for the service', () => {
    expect(withRestartHow(vendorMissingText('codex'), 'systemctl --user restart baton')).toBe(
      'The codex CLI was not found on PATH when baton started. Install it (npm i -g @openai/codex), then restart baton (systemctl --user restart baton).',
    );
  });
});
