import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

/** One published ledger key (`GET /v1/audit/pubkey`). */
interface PublishedKey {
  key_id: string;
  algorithm: string;
  public_key: string;
  pem: string;
  first_seq: number;
  last_seq?: number;
}

/** `svc keys ls`: the ledger's signing keys of a chain, as `--pubkey` values for `svc audit verify`. */
export class KeysLsCommand extends ClientCommand {
  static override paths = [['keys', 'ls']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: "List the audit ledger's signing keys of a chain (GET /v1/audit/pubkey)",
    details: `
      Prints each public key that signed the tenant's chain, retired keys with the seq range they
      signed, and the \`<alg>:<base64>\` form \`svc audit verify --pubkey\` takes. An auditor pins keys
      once, from a moment and a channel they trust (compare \`key_id\`, the first 16 bytes of
      SHA-256 of the key's SPKI, with the operator's key file), and verifies later records against
      those pinned keys, never against what a server answers then (docs/audit-verification.md).
    `,
    examples: [['The keys of a tenant chain', '$0 keys ls --tenant 0197…'], ['As JSON', '$0 keys ls -o json']],
  });

  async execute(): Promise<number> {
    const body = await this.withClient(async (client) => (await client.get('/v1/audit/pubkey')).body);
    const keys = (body as { keys?: unknown }).keys;
    if (!Array.isArray(keys)) throw new CliError(ExitCode.Server, 'bad_response', 'GET /v1/audit/pubkey did not answer a key list');
    this.emit(body as { keys: PublishedKey[] }, (v) =>
      v.keys.length === 0
        ? 'no signing key yet'
        : v.keys
            .map(
              (k) =>
                `${k.key_id}  ${k.algorithm}  seq ` +
                `${k.first_seq}–${k.last_seq ?? 'now'}${k.last_seq === undefined ? ' (active)' : ' (retired)'}\n  --pubkey ` +
                `${k.algorithm}:${k.public_key}`,
            )
            .join('\n'),
    );
    return ExitCode.OK;
  }
}
