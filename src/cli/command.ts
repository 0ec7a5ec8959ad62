/** The shape every argument-taking `baton` subcommand has. */

/**
 * A `baton` subcommand: `argv` is what follows the command word, `context` what it reads (the
 * service inputs, the paths, the baton home), `out` where it prints (a line, or bytes).
 *
 * @returns the exit code.
 */
export type CliCommand<Context, Output = string> = (
  argv: readonly string[],
  context: Context,
  out: (output: Output) => void,
) => Promise<number>;
