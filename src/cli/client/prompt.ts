import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Readable } from 'node:stream';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Asks for a secret on a terminal: the question on `output` (stderr), the answer read with echo
 * off, so a pasted setup token or a typed password never shows on the screen or in scrollback.
 * readline drives the terminal in raw mode and echoes into a sink that discards everything.
 */
export async function promptHidden(question: string, input: Readable, output: Writable): Promise<string> {
  output.write(question);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input, output: sink, terminal: true });
  try {
    return await new Promise<string>((resolve, reject) => {
      rl.once('line', resolve);
      rl.once('SIGINT', () => reject(new CliError(ExitCode.Err, 'aborted', 'interrupted at the prompt')));
      rl.once('close', () => reject(new CliError(ExitCode.Usage, 'usage', 'no answer at the prompt (end of input)')));
    });
  } finally {
    rl.close();
    output.write('\n');
  }
}
