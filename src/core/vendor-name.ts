/** The vendor CLIs baton can drive: OpenAI's Codex CLI and Anthropic's Claude Code. */
export const VENDOR_NAMES = ['codex', 'claude'] as const;

/** `"codex"` or `"claude"`: the one definition every layer uses. */
export type VendorName = (typeof VENDOR_NAMES)[number];
