/**
 * Identity at `svc serve` start: read whether a user exists (the setup gate's cached flag),
 * provision the `--seed-demo` administrator, and, while no user exists, mint the setup token and
 * print it on stdout only (never the logger: logs are shipped and kept, stdout is the operator's).
 */
import type { AuditSink } from '../../ledger/audit-sink.js';
import type { IdentityRuntime } from '../../auth/runtime.js';
import { mintSetupToken, removeSetupToken, setupTokenBanner } from '../../auth/setup-token.js';
import { createFirstAdmin, ledgerRecorder } from './setup-service.js';
import { claimSetupToken } from './setup-claim.js';

/** The public demo credentials of `--seed-demo` (spec "Secure defaults": loopback only; docs/auth.md). */
export const DEMO_ADMIN = { email: 'admin@demo.local', password: 'demo-password-1234', organization: 'Demo Tenant' } as const;

export interface IdentityStartup {
  audit: AuditSink;
  seedDemo: boolean;
  /** writes to stdout */
  print(text: string): void;
  log: { info(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
}

/** Prepare setup state; returns what happened, for the caller's log line (never the token). */
export async function startIdentity(runtime: IdentityRuntime, opts: IdentityStartup): Promise<{ setupRequired: boolean; seeded: boolean }> {
  let pending = await runtime.loadSetupState();
  let seeded = false;
  if (opts.seedDemo) {
    if (pending) {
      const { user, organization } = await createFirstAdmin(runtime, ledgerRecorder(opts.audit), DEMO_ADMIN, 'seed-demo');
      opts.log.warn(
        { email: user.email, tenant: organization.id },
        'seed-demo: demo administrator created with the public password from docs/auth.md (loopback only)',
      );
      seeded = true;
      pending = false;
    } else {
      opts.log.info({}, 'seed-demo: users already exist; nothing seeded');
    }
  }
  if (pending) {
    // A new token at every start while nobody has redeemed one: the previous digest is replaced.
    const token = await mintSetupToken(runtime.dataDir);
    // Replicas on one database share one token (setup-claim.ts): the first to start prints it.
    const claim = runtime.store.capabilities.supportsConcurrentWriters
      ? await claimSetupToken(runtime.store, runtime.dataDir, token)
      : { mine: true as const };
    if (claim.mine) {
      opts.print(setupTokenBanner(token));
      opts.log.info({ file: 'setup.token' }, 'setup required: the one-time setup token was printed on stdout');
    } else {
      await removeSetupToken(runtime.dataDir);
      opts.print(
        `setup is pending: the one-time setup token was printed by the replica ${claim.by} at ${claim.at}; redeem it on any replica ` +
          `(POST /v1/setup)\n`,
      );
      opts.log.info({ printed_by: claim.by, printed_at: claim.at }, 'setup required: the setup token was printed by another replica');
    }
  } else {
    await removeSetupToken(runtime.dataDir);
  }
  return { setupRequired: pending, seeded };
}
