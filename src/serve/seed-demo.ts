/**
 * `--seed-demo`: a synthetic but plausible estate in the demo tenant, so a newcomer sees a non-empty
 * access graph at once: agents with sessions, service identities (one shared), resources of every
 * class, grants, and observations that include unexpected accesses, unused grants and a few
 * escalation chains (an agent that writes CI config another identity executes, credentials read
 * by agents). Deterministic (a fixed-seed generator) and idempotent: a tenant that already has
 * agents is left alone. Loopback-only like the demo administrator (config.ts refuses otherwise).
 */
import type { AuditSink } from '../ledger/audit-sink.js';
import { nowEpochNs, formatTimestamp } from '../ledger/time.js';
import type { Store } from '../store/store-types.js';
import { createAgent, type Agent } from '../core/agents/agent-service.js';
import { createWorkspace } from '../core/workspaces/workspace-service.js';
import { ingestObservations, upsertGrants, type GrantInput, type Observation } from '../modules/accessmap/edge-store.js';
import { writeNodes } from '../modules/accessmap/node-store.js';
import type { Confidence, Mode, ResourceClass } from '../modules/accessmap/model.js';

/** The organisation name the identity area gives the demo tenant (src/core/setup/startup.ts). */
export const DEMO_TENANT_NAME = 'Demo Tenant';

const AGENTS = [
  'payments-copilot',
  'support-triage',
  'release-bot',
  'code-reviewer',
  'docs-writer',
  'sre-oncall',
  'data-analyst',
  'sales-assistant',
  'hr-helpdesk',
  'security-scanner',
  'infra-planner',
  'qa-runner',
  'finance-close',
  'marketing-drafts',
  'legal-review',
  'incident-scribe',
  'ml-trainer',
  'catalog-curator',
  'billing-recon',
  'vendor-intake',
  'backlog-groomer',
  'dependency-updater',
  'log-summarizer',
  'k8s-operator',
];
const IDENTITIES = [
  'ci-deployer',
  'etl-shared-svc',
  'prod-db-admin',
  'backup-operator',
  'readonly-analytics',
  'github-app',
  'vault-agent',
  'support-crm-api',
  'billing-api',
  'k8s-cluster-admin',
];
const RESOURCES: Array<[string, ResourceClass, string?]> = [
  ['s3://acme-payroll', 'data'],
  ['s3://acme-customer-exports', 'data'],
  ['s3://acme-ml-datasets', 'data'],
  ['pg://prod/customers', 'data'],
  ['pg://prod/payments', 'data'],
  ['pg://analytics/warehouse', 'data'],
  ['crm://accounts', 'data'],
  ['drive://legal/contracts', 'data'],
  ['drive://hr/reviews', 'data'],
  ['jira://ENG', 'data'],
  ['confluence://runbooks', 'data'],
  ['slack://#incidents', 'data'],
  ['git://acme/payments-service', 'code'],
  ['git://acme/web-frontend', 'code'],
  ['git://acme/infra-terraform', 'code'],
  ['git://acme/ml-pipelines', 'code'],
  ['git://acme/.github/workflows/deploy.yml', 'config'],
  ['k8s://prod/configmap/payments', 'config'],
  ['s3://acme-etl/config.yaml', 'config'],
  ['git://acme/renovate.json', 'config'],
  ['vault://prod/ci-deployer', 'credential', 'ci-deployer'],
  ['vault://prod/db-admin', 'credential', 'prod-db-admin'],
  ['vault://prod/etl', 'credential', 'etl-shared-svc'],
  ['vault://prod/k8s-admin', 'credential', 'k8s-cluster-admin'],
  ['file://~/.config/gh/hosts.yml', 'credential', 'github-app'],
  ['vault://prod/backup', 'credential', 'backup-operator'],
];

/** A small fixed-seed generator (mulberry32), so every demo estate is the same. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seeds the demo tenant unless it already has agents; returns what was created. */
export async function seedDemoEstate(
  store: Store,
  audit: AuditSink,
  log: { info(o: object, m?: string): void },
): Promise<{ seeded: boolean; agents: number; edges: number }> {
  const tenant = await store.transaction((tx) =>
    tx
      .selectFrom('tenants')
      .select('id')
      .where('name', '=', DEMO_TENANT_NAME)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .executeTakeFirst(),
  );
  if (!tenant) return { seeded: false, agents: 0, edges: 0 };
  const t = tenant.id;
  const existing = await store.withTenant(t, (tx) => tx.selectFrom('agents').select('id').where('tenant_id', '=', t).limit(1).execute());
  if (existing.length > 0) return { seeded: false, agents: 0, edges: 0 };
  const rand = rng(7);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

  const agents: Agent[] = [];
  for (const [i, name] of AGENTS.entries()) {
    agents.push(
      await createAgent(store, t, {
        name,
        kind: i % 3 === 0 ? 'coding' : i % 3 === 1 ? 'support' : 'ops',
        external_id: `demo-${name}`,
        labels: { team: pick(['payments', 'platform', 'growth', 'corp']), env: 'demo' },
      }),
    );
  }
  await createWorkspace(store, t, { root_path: '/srv/repos/payments-service', display_name: 'payments-service' });
  await createWorkspace(store, t, {
    root_path: '/srv/repos/infra-terraform',
    mount_mode: 'ro',
    dlp_posture: 'deny',
    restricted_subpaths: ['secrets', 'state'],
  });
  const ids = await writeNodes(
    store,
    t,
    IDENTITIES.map((ref) => ({ kind: 'identity' as const, ref })),
  );
  const identityId = new Map(ids.map((n) => [n.ref, n.id]));
  await writeNodes(
    store,
    t,
    RESOURCES.map(([ref, cls, owner]) => ({
      kind: 'resource' as const,
      ref,
      class: cls,
      ...(owner ? { parent_id: identityId.get(owner) ?? null } : {}),
    })),
  );
  const sessions = await writeNodes(
    store,
    t,
    Array.from({ length: 40 }, (_, i) => ({
      kind: 'session' as const,
      ref: `sess-${String(i).padStart(3, '0')}`,
      parent_id: (agents[i % agents.length] as Agent).id,
    })),
  );

  const grants: GrantInput[] = [];
  const observations: Observation[] = [];
  const day = 86_400_000_000_000n;
  const now = nowEpochNs();
  const at = (daysAgo: number) => formatTimestamp(now - BigInt(Math.floor(daysAgo * 1000)) * (day / 1000n));
  const conf = (): Confidence => pick(['high', 'high', 'high', 'medium', 'low']);
  const data = RESOURCES.filter(([, c]) => c === 'data' || c === 'code').map(([ref]) => ref);
  for (const a of agents) {
    // Each agent: a handful of grants, most of them used; some used beyond the grant.
    for (let k = 0; k < 4; k++) {
      const ref = pick(data);
      const mode: Mode = rand() < 0.3 ? 'rw' : 'r';
      grants.push({ origin: { kind: 'agent', id: a.id }, resource: { ref }, mode, source: 'iam' });
      if (rand() < 0.7)
        observations.push({
          origin: { kind: 'agent', id: a.id },
          resource: { ref },
          mode: rand() < 0.85 ? mode : 'rw',
          confidence: conf(),
          signal_source: pick(['cloudtrail', 'proxy', 'edr']),
          observed_at: at(rand() * 30),
          count: 1 + Math.floor(rand() * 200),
        });
    }
  }
  // Escalation chains: release-bot writes the deploy workflow that ci-deployer executes; ci-deployer reads its own credential.
  const agent = (name: string) => ({ kind: 'agent' as const, ref: `demo-${name}` });
  const ident = (ref: string) => ({ kind: 'identity' as const, ref });
  grants.push(
    { origin: agent('release-bot'), resource: { ref: 'git://acme/.github/workflows/deploy.yml' }, mode: 'rw', source: 'github' },
    { origin: ident('ci-deployer'), resource: { ref: 'git://acme/.github/workflows/deploy.yml' }, mode: 'r', source: 'github' },
    { origin: ident('ci-deployer'), resource: { ref: 'vault://prod/k8s-admin' }, mode: 'r', source: 'vault' },
    { origin: ident('k8s-cluster-admin'), resource: { ref: 'k8s://prod/configmap/payments' }, mode: 'rw', source: 'rbac' },
    { origin: ident('prod-db-admin'), resource: { ref: 'pg://prod/payments' }, mode: 'rw', source: 'iam' },
    { origin: ident('prod-db-admin'), resource: { ref: 'pg://prod/customers' }, mode: 'rw', source: 'iam' },
    { origin: ident('etl-shared-svc'), resource: { ref: 's3://acme-customer-exports' }, mode: 'rw', source: 'iam' },
    { origin: agent('dependency-updater'), resource: { ref: 'git://acme/renovate.json' }, mode: 'rw', source: 'github' },
    { origin: ident('github-app'), resource: { ref: 'git://acme/renovate.json' }, mode: 'r', source: 'github' },
    { origin: ident('backup-operator'), resource: { ref: 's3://acme-payroll' }, mode: 'r', source: 'iam' },
  );
  observations.push(
    {
      origin: ident('ci-deployer'),
      resource: { ref: 'git://acme/.github/workflows/deploy.yml' },
      mode: 'r',
      confidence: 'high',
      signal_source: 'github-audit',
      observed_at: at(1),
    },
    // Unexpected: agents reading credentials they were never granted.
    {
      origin: agent('sre-oncall'),
      resource: { ref: 'vault://prod/db-admin' },
      mode: 'r',
      confidence: 'high',
      signal_source: 'vault-audit',
      observed_at: at(2),
    },
    {
      origin: agent('data-analyst'),
      resource: { ref: 'vault://prod/etl' },
      mode: 'r',
      confidence: 'medium',
      attribution: 'inferred',
      signal_source: 'vault-audit',
      observed_at: at(3),
    },
    // The shared ETL account: attribution to a person or agent is impossible; confidence is capped low.
    {
      origin: ident('etl-shared-svc'),
      resource: { ref: 'pg://prod/customers' },
      mode: 'r',
      confidence: 'high',
      attribution: 'shared_identity',
      signal_source: 'pg-audit',
      observed_at: at(0.5),
      count: 42,
    },
    {
      origin: ident('etl-shared-svc'),
      resource: { ref: 's3://acme-etl/config.yaml' },
      mode: 'r',
      confidence: 'high',
      signal_source: 'cloudtrail',
      observed_at: at(1),
    },
    {
      origin: agent('ml-trainer'),
      resource: { ref: 's3://acme-etl/config.yaml' },
      mode: 'rw',
      confidence: 'high',
      signal_source: 'cloudtrail',
      observed_at: at(4),
    },
    {
      origin: agent('k8s-operator'),
      resource: { ref: 'vault://prod/k8s-admin' },
      mode: 'r',
      confidence: 'low',
      signal_source: 'vault-audit',
      observed_at: at(6),
    },
  );
  for (const [i, s] of sessions.entries()) {
    if (i % 3 !== 0) continue;
    observations.push({
      origin: { kind: 'session', id: s.id },
      resource: { ref: pick(data) },
      mode: 'r',
      confidence: 'high',
      signal_source: 'agent-hook',
      observed_at: at(rand() * 7),
    });
  }
  const g = await upsertGrants(store, t, grants);
  const o = await ingestObservations(store, t, observations);
  await audit.append(t, {
    actor: 'system',
    actor_kind: 'system',
    action: 'demo.seed',
    target_kind: 'tenant',
    target_id: t,
    meta: { agents: agents.length, grants: grants.length, observations: observations.length },
  });
  log.info(
    { tenant: t, agents: agents.length, edges: g.edges + o.edges },
    'seed-demo: demo estate created (agents, sessions, identities, resources, grants, observations)',
  );
  return { seeded: true, agents: agents.length, edges: g.edges + o.edges };
}
