/** `GET /v1/console/{setup-status,health-summary,config/effective,keys}`: read-only, superadmin. */
import Type, { type Static, type TProperties } from 'typebox';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { route, type AnyRoute } from '../../contract/route.js';
import type { Services } from '../../serve/services.js';
import { SECRETS_KEY_FILE } from '../../secrets/sealing.js';
import { effectiveConfig, type EffectiveSetting } from './effective-config.js';
import { keyringEntries, ledgerHeads, readSetting, tlsFacts, userCounts } from './console-state.js';
import { lastUpdateStatus } from './update-check.js';
import { connectorHealth } from '../connectors/health.js';
import { licensePublicKey } from './license.js';
import type { SsoSettings } from './sso-settings.js';

const common = { stability: 'stable' as const, tags: ['console'], permission: 'system:admin' };
const Loose = <T extends TProperties>(props: T) => Type.Object(props, { additionalProperties: true });

const SetupStep = Type.Object(
  { id: Type.String(), title: Type.String(), applicable: Type.Boolean(), completed: Type.Boolean(), why: Type.String() },
  { additionalProperties: false },
);
const SetupStatus = Type.Object({ complete: Type.Boolean(), steps: Type.Array(SetupStep) }, { additionalProperties: false });
const Setting = Type.Object(
  {
    name: Type.String(),
    flag: Type.Union([Type.String(), Type.Null()]),
    env: Type.Union([Type.String(), Type.Null()]),
    value: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
    source: Type.Union([Type.Literal('flag'), Type.Literal('env'), Type.Literal('default'), Type.Literal('stored')]),
    redacted: Type.Boolean(),
  },
  { additionalProperties: false },
);
const EffectiveDoc = Type.Object({ settings: Type.Array(Setting) }, { additionalProperties: false });
const KeyEntry = Loose({
  purpose: Type.String(),
  key_id: Type.String(),
  algorithm: Type.String(),
  fingerprint: Type.String(),
  public_key: Type.Union([Type.String(), Type.Null()]),
  location: Type.String(),
  created_at: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  retired: Type.Array(Type.Any()),
});
const KeysDoc = Type.Object({ keys: Type.Array(KeyEntry) }, { additionalProperties: false });
const HealthSummary = Loose({
  healthy: Type.Boolean(),
  ready: Type.Boolean(),
  version: Type.String(),
  store: Type.Any(),
  tls: Type.Any(),
  connectors: Type.Any(),
  ledger: Type.Any(),
  users: Type.Any(),
  update: Type.Any(),
});

/** Settings kept in the database, for the effective config (never a secret value; the SSO secret is a reference). */
export async function storedSettings(s: Services): Promise<EffectiveSetting[]> {
  const out: EffectiveSetting[] = [];
  const sso = await readSetting<SsoSettings>(s, 'sso');
  if (sso) {
    const v = sso.value;
    out.push({ name: 'sso.issuer', flag: null, env: null, value: v.issuer, source: 'stored', redacted: false });
    out.push({ name: 'sso.client_id', flag: null, env: null, value: v.client_id, source: 'stored', redacted: false });
    out.push({ name: 'sso.client_secret_ref', flag: null, env: null, value: v.client_secret_ref, source: 'stored', redacted: false });
    out.push({ name: 'sso.scopes', flag: null, env: null, value: v.scopes.join(' '), source: 'stored', redacted: false });
    out.push({ name: 'sso.allowed_domains', flag: null, env: null, value: v.allowed_domains.join(','), source: 'stored', redacted: false });
  }
  const lic = await readSetting<{ license_id: string }>(s, 'license');
  if (lic) out.push({ name: 'license.id', flag: null, env: null, value: lic.value.license_id, source: 'stored', redacted: false });
  return out;
}

export async function setupSteps(
  s: Services,
): Promise<Array<{ id: string; title: string; applicable: boolean; completed: boolean; why: string }>> {
  const users = await userCounts(s);
  const tls = tlsFacts(s);
  const auditKeyFile = process.env['SERVICE_AUDIT_KEY_FILE'];
  const sso = await readSetting<SsoSettings>(s, 'sso');
  return [
    {
      id: 'first_admin',
      title: 'First administrator',
      applicable: true,
      completed: users.superadmins_active >= 1,
      why: users.superadmins_active >= 1 ? 'an active superadmin exists' : 'redeem the setup token with svc auth bootstrap',
    },
    {
      id: 'tls_trusted',
      title: 'TLS certificate not self-signed',
      applicable: tls !== undefined,
      completed: tls !== undefined && !tls.self_signed,
      why:
        tls === undefined
          ? 'the server runs with --insecure (no TLS)'
          : tls.self_signed
            ? 'the served certificate is the generated self-signed one; give --tls-cert/--tls-key'
            : `certificate issued by ${tls.issuer.replace(/\n/g, ', ')}`,
    },
    {
      id: 'audit_key_backed_up',
      title: 'Audit signing key backed up',
      applicable: true,
      completed: Boolean(auditKeyFile),
      why: auditKeyFile
        ? 'the signing key comes from SERVICE_AUDIT_KEY_FILE, held outside the data directory'
        : 'the signing key was minted in the data directory only; copy audit-keys/ (svc backup) and set SERVICE_AUDIT_KEY_FILE',
    },
    await ledgerForwardedStep(s),
    {
      id: 'sso',
      title: 'Single sign-on',
      applicable: true,
      completed: sso !== undefined,
      why: sso ? `OpenID provider ${sso.value.issuer}` : 'no OpenID provider configured (PUT /v1/console/sso)',
    },
    {
      id: 'second_admin',
      title: 'A second administrator (dual control)',
      applicable: true,
      completed: users.superadmins_active >= 2,
      why:
        users.superadmins_active >= 2
          ? `${users.superadmins_active} active superadmins`
          : 'only one active superadmin; create another with svc users create --superadmin',
    },
  ];
}

/** Whether an enabled connector forwards the ledger and runs (GET /v1/connectors/health). */
async function ledgerForwardedStep(
  s: Services,
): Promise<{ id: string; title: string; applicable: boolean; completed: boolean; why: string }> {
  const h = await connectorHealth(s.store, s.connectors);
  const fwd = h.items.filter((i) => i.lanes.some((l) => l.source === 'ledger') && i.state !== 'disabled');
  const ok = fwd.filter((i) => i.state === 'running');
  const why =
    ok.length > 0
      ? `forwarded by ${ok.map((i) => `${i.name} (${i.kind})`).join(', ')}`
      : fwd.length > 0
        ? `the forwarding connector(s) ${fwd.map((i) => `${i.name}: ${i.state}${i.reason ? ` (${i.reason})` : ''}`).join('; ')}`
        : 'no output connector forwards the ledger (PUT /v1/console/connectors, svc connector set)';
  return { id: 'ledger_forwarded', title: 'A connector forwards the audit ledger', applicable: true, completed: ok.length > 0, why };
}

async function connectorSummary(s: Services): Promise<Record<string, unknown>> {
  const h = await connectorHealth(s.store, s.connectors);
  return { ...h.summary, failing: h.items.filter((i) => i.state === 'failed').map((i) => ({ name: i.name, reason: i.reason })) };
}

export async function healthSummary(s: Services): Promise<Record<string, unknown>> {
  const store = await s.storeReadiness();
  const tls = tlsFacts(s);
  const heads = s.ledger ? await ledgerHeads(s) : [];
  const users = await userCounts(s);
  const ready = store.ok && !s.draining();
  return {
    healthy: store.ok && s.engine.http === 'uws-native',
    ready,
    version: s.build.version,
    commit: s.build.commit,
    uptime_seconds: Math.floor((Date.now() - s.startedAt) / 1000),
    store: { engine: s.store.backend, ok: store.ok, migrations: store.migrations ?? null },
    tls: tls ? { self_signed: tls.self_signed, not_after: tls.not_after, days_left: tls.days_left } : null,
    connectors: await connectorSummary(s),
    ledger: {
      chains: heads.length,
      heads: heads.map((h) => ({ tenant: h.tenant, head_seq: h.head_seq, last_checkpoint_age_seconds: h.last_checkpoint_age_seconds })),
      oldest_checkpoint_age_seconds: heads.reduce<number | null>(
        (m, h) => (h.last_checkpoint_age_seconds === null ? m : Math.max(m ?? 0, h.last_checkpoint_age_seconds)),
        null,
      ),
    },
    users,
    update: lastUpdateStatus(),
  };
}

async function createdAt(file: string): Promise<string | null> {
  try {
    const st = await stat(file);
    return new Date(st.birthtimeMs > 0 ? st.birthtimeMs : st.mtimeMs).toISOString();
  } catch {
    return null;
  }
}

export async function keyCustody(s: Services): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  const ring = await keyringEntries(s.dataDir);
  if (ring) {
    const active = ring.keys.find((k) => k.key_id === ring.active);
    const configured = process.env['SERVICE_AUDIT_KEY_FILE'];
    if (active) {
      out.push({
        purpose: 'audit_signing',
        key_id: active.key_id,
        algorithm: active.algorithm,
        fingerprint: active.key_id,
        public_key: active.public_key,
        location: configured
          ? `file ${configured} (SERVICE_AUDIT_KEY_FILE)`
          : `file ${path.join(s.dataDir, 'audit-keys', active.file ?? '')}`,
        created_at: active.created_at,
        status: 'active',
        retired: ring.keys
          .filter((k) => k.key_id !== ring.active)
          .map((k) => ({
            key_id: k.key_id,
            algorithm: k.algorithm,
            fingerprint: k.key_id,
            public_key: k.public_key,
            created_at: k.created_at,
            retired_at: k.retired_at ?? null,
          })),
      });
    }
  }
  const sealFile = process.env['SERVICE_SECRETS_KEY_FILE'] ?? path.join(s.dataDir, SECRETS_KEY_FILE);
  out.push({
    purpose: 'secrets_sealing',
    key_id: s.sealer.keyId,
    algorithm: 'aes-256-gcm',
    fingerprint: s.sealer.keyId,
    public_key: null,
    location: `file ${sealFile}${process.env['SERVICE_SECRETS_KEY_FILE'] ? ' (SERVICE_SECRETS_KEY_FILE)' : ''}`,
    created_at: await createdAt(sealFile),
    status: 'active',
    retired: [],
  });
  const tls = tlsFacts(s);
  if (tls && s.tlsMaterial) {
    out.push({
      purpose: 'tls',
      key_id: tls.pin_sha256,
      algorithm: tls.algorithm,
      fingerprint: tls.fingerprint_sha256,
      public_key: tls.public_key_pem,
      location: `file ${s.tlsMaterial.keyPath} (certificate ${s.tlsMaterial.certPath})`,
      created_at: tls.valid_from,
      status: tls.days_left < 0 ? 'expired' : 'active',
      not_after: tls.not_after,
      self_signed: tls.self_signed,
      retired: [],
    });
  }
  const lic = licensePublicKey();
  out.push({
    purpose: 'license_verification',
    key_id: lic.fingerprint.slice(0, 32),
    algorithm: 'ed25519',
    fingerprint: lic.fingerprint,
    public_key: lic.pem,
    location: lic.source,
    created_at: null,
    status: 'active',
    retired: [],
  });
  // Session and API tokens are random secrets stored as SHA-256 digests: there is no key to hold.
  out.push({
    purpose: 'sessions',
    key_id: 'none',
    algorithm: 'sha256 digests of random tokens (no key)',
    fingerprint: 'none',
    public_key: null,
    location: 'none: sessions and API keys are stored as digests',
    created_at: null,
    status: 'active',
    retired: [],
  });
  return out;
}

export const statusRoutes: AnyRoute[] = [
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/setup-status',
    operationId: 'consoleSetupStatus',
    summary: 'The steps of a first deployment, each completed or not and why, from real state',
    response: SetupStatus,
    handler: async (ctx) => {
      const steps = await setupSteps(ctx.services);
      return { complete: steps.every((s) => !s.applicable || s.completed), steps };
    },
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/health-summary',
    operationId: 'consoleHealthSummary',
    summary: 'One answer for a dashboard: health, readiness, store, TLS, connectors, ledger heads, users, update status',
    response: HealthSummary,
    timeoutMs: 10_000,
    handler: async (ctx) => (await healthSummary(ctx.services)) as Static<typeof HealthSummary>,
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/config/effective',
    operationId: 'consoleEffectiveConfig',
    summary: 'Every setting with its value, its source (flag, env, default, stored) and whether it is redacted; secrets never shown',
    response: EffectiveDoc,
    handler: async (ctx) => ({ settings: effectiveConfig(ctx.services.config, process.env, await storedSettings(ctx.services)) }),
  }),
  route({
    ...common,
    method: 'GET',
    path: '/v1/console/keys',
    operationId: 'consoleKeys',
    summary:
      'Key custody: every key the service holds, with purpose, algorithm, fingerprint, public key, location, creation and retired ' +
      'predecessors',
    response: KeysDoc,
    handler: async (ctx) => ({ keys: (await keyCustody(ctx.services)) as Static<typeof KeysDoc>['keys'] }),
  }),
];
