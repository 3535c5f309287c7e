import assert from 'node:assert/strict';
import { PassThrough, Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { confirmDestructive } from '../../../src/cli/client/confirm.js';
import { CliError } from '../../../src/cli/client/errors.js';

describe('confirmDestructive (-y/--yes)', () => {
  it('passes with --yes even without a terminal', async () => {
    await confirmDestructive({ yes: true, action: 'delete tenant x', stdin: Readable.from([]), stderr: new PassThrough() });
  });

  it('refuses with exit 2 when stdin is not a terminal and --yes is missing', async () => {
    await assert.rejects(
      confirmDestructive({ yes: false, action: 'delete tenant x', stdin: Readable.from(['y\n']), stderr: new PassThrough() }),
      (err: unknown) => err instanceof CliError && err.exitCode === 2 && /--yes/.test(err.message) && /delete tenant x/.test(err.message),
    );
  });

  it('asks on a terminal and proceeds only on yes', async () => {
    const ask = async (answer: string): Promise<void> => {
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const stderr = new PassThrough();
      const pending = confirmDestructive({ yes: false, action: 'revoke token t', stdin, stderr });
      stdin.write(`${answer}\n`);
      await pending;
    };
    await ask('y');
    await ask('YES');
    await assert.rejects(ask('n'), (err: unknown) => err instanceof CliError && err.exitCode === 1 && err.code === 'aborted');
    await assert.rejects(ask(''), (err: unknown) => err instanceof CliError && err.code === 'aborted');
  });
});
