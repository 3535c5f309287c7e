/**
 * Names and external ids wherever the CLI takes an agent, resource or workspace id: tables show
 * names, so a name must be usable in the next command. A UUID is used as given; anything else is
 * looked up with `GET /v1/search` and must match one object's name or key (external id, natural
 * key, root path) exactly. No match → exit 4; several → exit 2 listing them, so nothing is guessed.
 */
import { CliError, CliUsageError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import type { HttpClient } from './http-client.js';

export type RefKind = 'agent' | 'workspace' | 'session' | 'identity' | 'resource';
type Hit = { kind: RefKind; id: string; name: string; detail: string };
type SearchAnswer = { items: Hit[]; has_more: boolean; kinds: RefKind[] };

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Whether `text` is a UUID (any case). */
export function isUuid(text: string): boolean {
  return UUID.test(text);
}

/** Resolves an id, name or key of one of `kinds` to `{id, kind}` (kind unknown when a UUID was given). */
export async function resolveRef(
  client: HttpClient,
  ref: string,
  kinds: readonly RefKind[],
  flag: string,
): Promise<{ id: string; kind?: RefKind }> {
  if (isUuid(ref)) return { id: ref.toLowerCase() };
  const what = kinds.join(' or ');
  if (ref.trim() === '' || ref.length > 200 || /[\u0000-\u001f\u007f]/.test(ref)) {
    throw new CliUsageError(`invalid ${flag} ${JSON.stringify(ref)}: give the ${what}'s id (a UUID), name or external id`);
  }
  const answer = (await client.get('/v1/search', { query: { q: ref, limit: 1000 } })).body as SearchAnswer;
  const matches = answer.items.filter((h) => kinds.includes(h.kind) && (h.name === ref || h.detail === ref));
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return { id: only.id, kind: only.kind };
  if (matches.length > 1) {
    const listed = matches.map((h) => `${h.kind} ${h.name}${h.detail ? ` [${h.detail}]` : ''} ${h.id}`).join('; ');
    throw new CliError(
      ExitCode.Usage,
      'ambiguous',
      `${flag} ${JSON.stringify(ref)} matches ${matches.length} objects: ${listed}; give one of these ids`,
    );
  }
  const hidden = kinds.filter((k) => !answer.kinds.includes(k));
  const note = hidden.length > 0 ? ` (this credential may not search ${hidden.join(', ')}: graph nodes need the editor role)` : '';
  throw new CliError(ExitCode.NotFound, 'not_found', `no ${what} with the id, name or external id ${JSON.stringify(ref)}${note}`);
}
