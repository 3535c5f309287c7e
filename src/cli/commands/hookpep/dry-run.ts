import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { PDP, evalText, hookInput, readText, surfaceOption, type EvalView } from './support.js';

/** `svc hookpep dry-run`: Decide a hook input as the decision endpoint would (candidate --file or the active revision); records nothing. */
export class HookpepDryRunCommand extends ClientCommand {
  static override paths = [['hookpep', 'dry-run']];
  static override usage = BaseCommand.Usage({
    category: 'Governance',
    description: 'Decide a hook input as the decision endpoint would (candidate --file or the active revision); records nothing',
    examples: [['A Bash call', '$0 hookpep dry-run --tool Bash --command "git push --force"']],
  });

  file = Option.String('--file', { description: 'Candidate policy document (default: the active revision)' });
  input = Option.String('--input', { description: 'Hook JSON file, or - for stdin' });
  tool = Option.String('--tool', { description: 'Tool name (instead of --input)' });
  command = Option.String('--command', { description: 'tool_input.command (with --tool)' });
  event = Option.String('--event', { description: 'Hook event (default PreToolUse)' });
  surface = surfaceOption();

  async execute(): Promise<number> {
    const input = await hookInput({ input: this.input, tool: this.tool, command: this.command, event: this.event }, this.context.stdin);
    const body = {
      input,
      ...(this.file ? { content: await readText(this.file, this.context.stdin) } : {}),
      ...(this.surface ? { surface: this.surface } : {}),
    };
    const r = (await this.withClient((c) => c.request('POST', `${PDP}/dry-run`, { body }))).body as EvalView;
    this.emit(r, evalText);
    return 0;
  }
}
