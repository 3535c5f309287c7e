/** `POST /v1/console/support-bundle`: superadmin at AAL3 (DECISIONS.md "Assurance"). */
import { errors } from '../../contract/errors.js';
import { route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';
import { requireAal3 } from '../../auth/assurance.js';
import { supportBundle } from './support-bundle.js';

export const bundleRoutes: AnyRoute[] = [
  route({
    stability: 'stable',
    tags: ['console'],
    permission: 'system:admin',
    method: 'POST',
    path: '/v1/console/support-bundle',
    operationId: 'supportBundle',
    summary:
      'A streamed .tar.gz for support: version, redacted config, health, migrations, store statistics, ledger heads and verify ' +
      'summary; no secret, token, key or personal data (AAL3)',
    audit: 'console.support_bundle',
    auditChain: 'system',
    produces: 'application/gzip',
    timeoutMs: 120_000,
    handler: async (ctx) => {
      if (!ctx.principal) throw errors.unauthenticated();
      requireAal3(ctx.principal);
      // Recorded before the first byte: a bundle that leaves the server is always in the ledger.
      await ctx.audit({ kind: 'support_bundle', id: ctx.requestId });
      const name = `svc-support-${new Date().toISOString().replace(/[:.]/g, '-')}.tar.gz`;
      return reply.stream(supportBundle(ctx.services), 'application/gzip', 200, {
        'content-disposition': `attachment; filename="${name}"`,
      });
    },
  }),
];
