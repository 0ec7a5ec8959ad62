/** `baton approve`: sets `[harness] approved = true` in `config.toml`. */
import path from 'node:path';
import { editConfig, table, type ConfigEdit } from './file-edit.js';
import { edited, locate } from './toml-text.js';

/**
 * Sets `[harness] approved = true`: replaces the value of an existing `approved = …` line in
 * `[harness]` (its comment stays), else inserts `approved = true` after the `[harness]` header,
 * else appends a `[harness]` table. A missing file first gets the starter template (mode 0600).
 * The file is replaced atomically (temp file in the same directory, fsync, rename) with its mode.
 *
 * @param configPath path of `config.toml`; a symlink is followed and its target edited.
 * @param options.homeDir only anchors `~` while validating; any absolute path works.
 * @throws BatonError `config_invalid` when the file does not validate, is not UTF-8, or cannot be
 *   edited safely (the message says what to set by hand); the file is then untouched.
 * @throws BatonError `config_unreadable` when the file cannot be read or written.
 */
export async function approveConfig(
  configPath: string,
  options: { readonly homeDir?: string | undefined } = {},
): Promise<ConfigEdit> {
  const homeDir = options.homeDir ?? path.parse(path.resolve(configPath)).root;
  return editConfig(configPath, homeDir, 'set [harness] approved = true', (text, config) => {
    if (config.harness.approved) return undefined;
    return {
      text: edited(
        locate(text, 'harness', 'approved'),
        (v) => `${text.slice(0, v.start)}true${text.slice(v.end)}`,
        'true',
      ),
      expect: (data) => void (table(data, 'harness').approved = true),
    };
  });
}
