/** Wire schemas of the claude-policy routes (TypeBox; validation and OpenAPI both read them). */
import Type from 'typebox';
import { MultilineText, Text, Timestamp } from '../../contract/common.js';
import { SURFACES } from './surfaces.js';

export const SurfaceName = Type.Union(
  SURFACES.map((s) => Type.Literal(s)),
  { description: 'managed-settings, hooks, managed-mcp or sandbox' },
);
const Content = MultilineText({ maxLength: 1024 * 1024, description: 'the whole JSON document of the surface (replace semantics)' });
const Sha = Type.String({ pattern: '^[0-9a-f]{64}$' });
const Host = Text({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$',
  description: 'the host name as the host reports it',
});

export const DocBody = Type.Object({ surface: SurfaceName, content: Content }, { additionalProperties: false });
export const PublishBody = Type.Object(
  { surface: SurfaceName, content: Content, note: Type.Optional(Text({ maxLength: 2000 })) },
  { additionalProperties: false },
);
export const SurfaceQuery = Type.Object({ surface: SurfaceName }, { additionalProperties: false });
export const ArtifactQuery = Type.Object(
  { surface: SurfaceName, revision: Type.Optional(Type.Integer({ minimum: 1, description: 'default: the published (active) revision' })) },
  { additionalProperties: false },
);
export const RevisionParams = Type.Object({ revision: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

const Credential = Type.Object({ path: Type.String(), reason: Type.String() }, { additionalProperties: false });
export const ValidateResult = Type.Object(
  {
    surface: Type.String(),
    valid: Type.Boolean(),
    errors: Type.Array(Type.String()),
    warnings: Type.Array(Type.String()),
    credentials: Type.Array(Credential),
    sha256: Type.Union([Sha, Type.Null()], {
      description: 'sha256 of the artifact publish would sign (null when the document does not parse)',
    }),
  },
  { additionalProperties: false },
);
export const DryRunResult = Type.Object(
  {
    surface: Type.String(),
    valid: Type.Boolean(),
    errors: Type.Array(Type.String()),
    warnings: Type.Array(Type.String()),
    credentials: Type.Array(Credential),
    sha256: Type.Union([Sha, Type.Null()]),
    artifact: Type.Union([Type.String(), Type.Null()], { description: 'the exact bytes publish would sign' }),
    published_revision: Type.Union([Type.Integer(), Type.Null()]),
    unchanged: Type.Boolean({ description: 'the artifact equals the published revision' }),
    changes: Type.Array(Type.Object({ path: Type.String(), change: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);
export const Revision = Type.Object(
  {
    surface: Type.String(),
    revision: Type.Integer({ minimum: 1 }),
    content: Type.String({ description: 'the artifact (UTF-8 text)' }),
    note: Type.String(),
    sha256: Sha,
    key_fingerprint: Type.String(),
    signature: Type.String({ description: 'base64 Ed25519 signature over the artifact bytes' }),
    created_by: Type.String(),
    created_at: Timestamp,
    active: Type.Boolean(),
  },
  { additionalProperties: false },
);
export const RevisionList = Type.Object({ items: Type.Array(Revision) }, { additionalProperties: false });
export const Artifact = Type.Object(
  {
    surface: Type.String(),
    revision: Type.Integer(),
    file: Type.String({ description: 'the file name the host installs' }),
    content: Type.String({ description: 'the artifact bytes as UTF-8 text' }),
    sha256: Sha,
    alg: Type.Literal('ed25519'),
    signature: Type.String(),
    key_fingerprint: Type.String(),
    public_key_pem: Type.String({
      description: 'the key to verify with: openssl pkeyutl -verify -pubin -inkey key.pem -rawin -in artifact -sigfile sig',
    }),
  },
  { additionalProperties: false },
);
export const SigningKey = Type.Object(
  { alg: Type.Literal('ed25519'), fingerprint: Type.String(), public_key_pem: Type.String() },
  { additionalProperties: false },
);

export const CheckinBody = Type.Object(
  {
    host: Host,
    surface: SurfaceName,
    content_b64: Type.String({
      maxLength: 1400000,
      pattern: '^[A-Za-z0-9+/]*={0,2}$',
      description: 'the exact bytes of the file the host holds, base64',
    }),
    signature: Type.Optional(
      Type.String({
        maxLength: 200,
        pattern: '^[A-Za-z0-9+/=]+$',
        description: 'the signature installed beside the file (base64); when given it must verify too',
      }),
    ),
  },
  { additionalProperties: false },
);
export const CheckinResult = Type.Object(
  {
    host: Type.String(),
    surface: Type.String(),
    sha256: Sha,
    verified: Type.Boolean({ description: 'the bytes are a revision signed by the current policy-signing key' }),
    revision: Type.Union([Type.Integer(), Type.Null()], { description: 'the revision the bytes are (null: none)' }),
    published_revision: Type.Union([Type.Integer(), Type.Null()]),
    current: Type.Boolean({ description: 'verified and the published revision' }),
    reason: Type.String(),
    checked_in_at: Timestamp,
  },
  { additionalProperties: false },
);
export const Distribution = Type.Object(
  {
    surface: Type.String(),
    published: Type.Union([Type.Object({ revision: Type.Integer(), sha256: Sha }, { additionalProperties: false }), Type.Null()]),
    hosts: Type.Array(
      Type.Object(
        {
          host: Type.String(),
          sha256: Sha,
          revision: Type.Union([Type.Integer(), Type.Null()]),
          verified: Type.Boolean(),
          current: Type.Boolean(),
          reason: Type.String(),
          checked_in_by: Type.String(),
          checked_in_at: Timestamp,
        },
        { additionalProperties: false },
      ),
    ),
    summary: Type.Object(
      { hosts: Type.Integer(), current: Type.Integer(), stale: Type.Integer(), unverified: Type.Integer() },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
