import { Builtins, Cli } from 'clipanion';
import type { BaseContext, CommandClass } from 'clipanion';
import { SvcCli, enclosingGroup, groupOf, suggestCommand } from './help.js';
import { buildInfo } from '../build-info.js';
import { errorDocument } from './client/base-command.js';
import { CliUsageError } from './client/errors.js';
import { ExitCode } from './client/exit-codes.js';
import { commands } from './commands/index.js';

/** Builds the `svc` clipanion root with every command (and `extra`: a test module's) and the help/definitions built-ins. */
export function buildCli(extra: readonly CommandClass[] = []): SvcCli {
  const cli = new SvcCli({
    binaryName: 'svc',
    binaryLabel: 'svc: self-hosted control plane for enterprise AI agents',
    binaryVersion: buildInfo().version,
    enableCapture: false,
    // Explicit, because clipanion formats some help text from its default context, which reports
    // colours for any stream on a colour-capable TERM, pipes included.
    enableColors: colorDepth() > 1,
  });
  for (const command of [...commands, ...extra]) cli.register(command);
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  // `svc --clipanion=definitions` dumps every command's metadata as JSON (source of docs/cli.md).
  cli.register(Builtins.DefinitionsCommand);
  return cli;
}

/**
 * Entry point called by `bin/svc.js`: parses `argv` (without node and script), runs the command
 * and sets `process.exitCode`. A command line that does not parse (unknown command, unknown or
 * malformed flag, bad `-o` value) exits 2 (Usage), never clipanion's default 1.
 */
export async function main(argv: string[], extra: readonly CommandClass[] = []): Promise<void> {
  quietOnClosedPipes(argv[0] === 'serve' || argv[0] === 'collector');
  const cli = buildCli(extra);
  const context: BaseContext = { ...Cli.defaultContext, colorDepth: colorDepth() };
  if (argv.length === 0) {
    context.stderr.write(cli.usage(null, { colored: context.colorDepth > 1 }));
    process.exitCode = ExitCode.Usage;
    return;
  }
  const paths = cli.paths();
  const group = groupOf(argv, paths);
  if (
    group !== undefined &&
    argv.length - group.length <= 1 &&
    (argv.length === group.length || ['--help', '-h'].includes(argv[group.length] ?? ''))
  ) {
    // A group prints its commands: on stdout with exit 0 when asked (--help), else on stderr, exit 2 (like bare `svc`).
    const asked = argv.length > group.length;
    (asked ? context.stdout : context.stderr).write(cli.groupUsage(group));
    process.exitCode = asked ? ExitCode.OK : ExitCode.Usage;
    return;
  }
  let command;
  try {
    command = cli.process(argv, context);
  } catch (err) {
    let reason = describeParseError(err);
    if (reason === 'unknown command') {
      const nearest = suggestCommand(argv, paths);
      if (nearest !== undefined)
        reason = `unknown command "${argv
          .filter((a) => !a.startsWith('-'))
          .slice(0, nearest.split(' ').length)
          .join(' ')}"; did you mean "svc ${nearest}"?`;
      else {
        const within = enclosingGroup(argv, paths);
        if (within !== undefined)
          reason = `unknown command under "svc ${within.join(' ')}" (run "svc ${within.join(' ')} --help" for its commands)`;
      }
    }
    const failure = new CliUsageError(reason.endsWith('?') ? reason : `${reason}; run "svc --help" for usage`);
    context.stderr.write(`svc: ${failure.code}: ${failure.message}\n`);
    if (wantsJson(argv)) context.stdout.write(`${JSON.stringify(errorDocument(failure))}\n`);
    process.exitCode = ExitCode.Usage;
    return;
  }
  process.exitCode = await cli.run(command, context);
}

/**
 * A reader that goes away (`svc openapi | head`) is not a failure of `svc`: without a listener the
 * EPIPE would surface as an unhandled 'error' event with a stack trace. A command that only
 * prints ends at once, exit 0 (or the code it already set); the long-running servers keep running,
 * since their work does not depend on anyone reading their stdout.
 */
function quietOnClosedPipes(longRunning: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (!longRunning) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    });
  }
}

/** Colours only for a terminal, and never with NO_COLOR (https://no-color.org); clipanion alone ignores isTTY. */
function colorDepth(): number {
  if (process.env.NO_COLOR || !process.stdout.isTTY) return 1;
  return process.stdout.getColorDepth();
}

/** Turns clipanion's multi-line parse errors into one line. */
function describeParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error ? err.name : '';
  if (name === 'UnknownSyntaxError' && /Command not found/.test(message)) return 'unknown command';
  const first = message.split('\n').find((line) => line.trim() !== '') ?? message;
  return first.replace(/\s+/g, ' ').trim().replace(/[.:;]$/, '');
}

/** Whether `-o json` appears on a command line that did not parse, so the error goes out as JSON too. */
function wantsJson(argv: readonly string[]): boolean {
  return argv.some(
    (arg, i) => ((arg === '-o' || arg === '--output') && argv[i + 1] === 'json') || arg === '-ojson' || arg === '--output=json',
  );
}
