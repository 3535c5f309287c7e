import { Option } from 'clipanion';
import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import type { Page } from '../auth/support.js';
import { filterOptions, filterQuery, findingTable, type FindingView } from './support.js';

/** `svc findings ls`: a page of findings under filters. */
export class FindingsLsCommand extends ClientCommand {
  static override paths = [['findings', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Findings',
    description: 'List findings (GET /v1/m/security/findings), in creation order',
    details:
      'One page per call; when more exist the text output ends with the `--cursor` to continue with, and `-o json` carries ' +
      '`has_more` and `cursor`.',
    examples: [
      ['Open findings', '$0 findings ls --status open'],
      ["svc's own drift findings as JSON", '$0 findings ls --source detector --kind drift -o json'],
    ],
  });

  limit = Option.String('--limit', { description: 'Page size, 1..1000 (default 50)' });
  cursor = Option.String('--cursor', { description: 'Continue after this cursor (from the previous page)' });
  status = filterOptions().status;
  severity = filterOptions().severity;
  source = filterOptions().source;
  kind = filterOptions().kind;
  rule = filterOptions().rule;
  subjectKind = filterOptions().subjectKind;
  subjectRef = filterOptions().subjectRef;

  async execute(): Promise<number> {
    const query = { limit: this.limit, cursor: this.cursor, ...filterQuery(this) };
    const page = (await this.withClient((c) => c.get('/v1/m/security/findings', { query }))).body as Page<FindingView>;
    this.emit(page, (p) => `${findingTable(p.items)}${p.has_more ? `\nmore: --cursor ${p.cursor}` : ''}`);
    return 0;
  }
}
