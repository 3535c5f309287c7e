import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import { CliError, CliUsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/** What {@link confirmDestructive} needs: the `--yes` flag and the terminal streams. */
export type ConfirmOptions = {
  yes: boolean;
  /** What is about to happen, e.g. `revoke token 0190…`. */
  action: string;
  stdin: Readable & { isTTY?: boolean };
  stderr: Writable;
};

/**
 * Gate for destructive or replacing commands (spec "Shared client flags": they need `-y, --yes`
 * in a non-interactive session). With `--yes` it passes; without it, a terminal is asked
 * `[y/N]` on stderr, and a non-terminal stdin (CI, pipes, cron) is refused with exit 2, since
 * nobody is there to answer and silently proceeding is the one unsafe choice.
 */
export async function confirmDestructive(options: ConfirmOptions): Promise<void> {
  if (options.yes) return;
  if (options.stdin.isTTY !== true) {
    throw new CliUsageError(`refusing to ${options.action} without --yes: stdin is not a terminal, so nobody can confirm`);
  }
  const prompt = createInterface({ input: options.stdin, output: options.stderr, terminal: true });
  try {
    const answer = await prompt.question(`${options.action}? [y/N] `);
    if (/^y(es)?$/i.test(answer.trim())) return;
  } finally {
    prompt.close();
  }
  throw new CliError(ExitCode.Err, 'aborted', `${options.action}: not confirmed`);
}
