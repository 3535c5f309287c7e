/** `POST /v1/setup` (spec Authentication 3; DECISIONS.md "Setup, credentials, sessions"). */
import Type from 'typebox';
import { Text } from '../../contract/common.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { identityOf } from '../../auth/runtime.js';
import { Email, Organization, OrgName, Password, User } from '../users/schemas.js';
import { redeemSetup, SETUP_AUDIT } from './setup-service.js';

const SetupBody = Type.Object(
  {
    token: Text({ minLength: 1, maxLength: 128, description: 'the one-time setup token printed on stdout at first boot (svcst_…)' }),
    email: Email,
    password: Password,
    organization: Type.Optional(OrgName),
  },
  { additionalProperties: false },
);

const SetupResult = Type.Object({ user: User, organization: Organization }, { additionalProperties: false });

export const setupRoutes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/v1/setup',
    stability: 'stable',
    operationId: 'setup',
    summary: 'Redeem the one-time setup token: create the first organization and its superadmin owner',
    tags: ['auth'],
    permission: PUBLIC,
    setupExempt: true,
    audit: SETUP_AUDIT,
    auditChain: 'system',
    body: SetupBody,
    response: SetupResult,
    status: 201,
    bodyLimit: 16 * 1024,
    handler: async (ctx) => {
      const { token, ...input } = ctx.body;
      return redeemSetup(
        identityOf(ctx.services),
        (r) => ctx.audit(r.target, r.meta, { action: r.action, chain: r.chain, as: { user: r.userId } }),
        token,
        input,
      );
    },
  }),
];
