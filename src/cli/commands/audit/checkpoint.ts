import { BaseCommand, ClientCommand } from '../../client/base-command.js';
import { CliError } from '../../client/errors.js';
import { ExitCode } from '../../client/exit-codes.js';

/** The `svc audit checkpoint -o json` document (the server's answer). */
export interface CheckpointAnswer {
  checkpoints: Array<{ tenant: string; seq: number; attested_seq: number }>;
}

/** `svc audit checkpoint`: write a signed checkpoint now in every chain (POST /v1/audit/checkpoint; superadmin). */
export class AuditCheckpointCommand extends ClientCommand {
  static override paths = [['audit', 'checkpoint']];

  static override usage = BaseCommand.Usage({
    category: 'Audit',
    description: 'Write a signed checkpoint now in every audit chain (superadmin)',
    details: `
      Asks the server (\`POST /v1/audit/checkpoint\`) to append an \`audit.checkpoint\` record to every
      tenant chain and the system chain that has records. Each checkpoint attests the record before
      it with a signature over the chain head (docs/audit-verification.md). The server also writes
      them on an interval (\`SERVICE_AUDIT_CHECKPOINT_INTERVAL\` seconds, default 60) for chains that moved.
    `,
    examples: [['Checkpoint every chain', '$0 audit checkpoint --server https://127.0.0.1:8443']],
  });

  async execute(): Promise<number> {
    // Long on a server with many tenants: one durable append per chain.
    const answer = await this.withClient(async (client) => (await client.request('POST', '/v1/audit/checkpoint')).body);
    const a = answer as Partial<CheckpointAnswer>;
    if (!Array.isArray(a.checkpoints))
      throw new CliError(ExitCode.Server, 'bad_response', 'POST /v1/audit/checkpoint did not answer a checkpoint list');
    this.emit(a as CheckpointAnswer, (v) =>
      v.checkpoints.length === 0
        ? 'no chain has records yet'
        : v.checkpoints.map((c) => `${c.tenant}  seq ${c.seq}  attests ${c.attested_seq}`).join('\n'),
    );
    return ExitCode.OK;
  }
}
