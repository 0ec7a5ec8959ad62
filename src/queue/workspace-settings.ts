/**
 * The workspace gate's settings as this node stands now: shared by a launch here, `/use` and the
 * placing of a run routed to this node.
 */
import type { BatonConfig } from '../config/index.js';
import type { WorkspaceSettings } from '../harness/workspace.js';

/** This node's directories besides the config. */
export interface NodeDirs {
  homeDir: string;
  /** Directories no run may contain or lie in (`$BATON_HOME`, the CLI homes). @default none */
  protectedDirs?: readonly string[] | undefined;
  /** `$BATON_HOME/worktrees`, baton's own root of run worktrees. @default none */
  worktreesDir?: string | undefined;
}

/** The settings {@link resolveWorkspace} checks a directory against, from `config` (the live one). */
export function workspaceSettingsOf(config: BatonConfig, dirs: NodeDirs): WorkspaceSettings {
  return {
    roots: config.workspace.roots,
    defaultCwd: config.workspace.defaultCwd,
    projects: config.projects,
    homeDir: dirs.homeDir,
    protectedDirs: dirs.protectedDirs ?? [],
    ownedRoots: dirs.worktreesDir ? [dirs.worktreesDir] : [],
  };
}
