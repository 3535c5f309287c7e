/**
 * Audit log: the tenant chain (the system chain for superadmins) with filters in the URL, record
 * detail with its integrity fields, "verify now" with the report, export download in any format.
 */
import { useState } from 'preact/hooks';
import { api } from '../api';
import { useApp } from '../app-context';
import type { PageProps } from '../pages';
import { setQuery } from '../router';
import { ErrorBox, Field, fmtTime, Show, useAction, useAsync } from '../ui';

interface AuditRecord {
  id: string;
  tenant: string;
  seq: number;
  occurred_at: string;
  actor: string;
  actor_kind: string;
  action: string;
  target_kind: string;
  target_id: string;
  meta: string | null;
  meta_blind: string | null;
  meta_commitment: string | null;
  payload_hash: string | null;
  prev_hash: string;
  hash: string;
  sig: string;
  key_id: string;
}
interface AuditPage {
  items: AuditRecord[];
  has_more: boolean;
  head_seq: number;
  cursor?: string;
}
interface VerifyReport {
  ok: boolean;
  chain: { ok: boolean; checked: number; break_at: number | null; reason: string | null };
  checkpoints: { ok: boolean; status: string; count: number; latest_attested_seq: number | null; reason: string | null };
  signatures: { ok: boolean; checked: number; first_bad_seq: number | null; reason: string | null };
}

const FILTERS = ['action', 'actor', 'target_kind', 'target_id', 'since', 'until'] as const;
const FORMATS = ['cef', 'leef', 'syslog', 'otlp', 'ocsf'];

export function AuditPage({ loc }: PageProps) {
  const app = useApp();
  const chain = loc.query.get('chain') === 'system' && app.me.superadmin ? 'system' : 'tenant';
  const from = loc.query.get('from') ?? '';
  const selected = loc.query.get('seq');
  const filterQuery = new URLSearchParams();
  for (const f of FILTERS) {
    const v = loc.query.get(f);
    if (v) filterQuery.set(f, v);
  }
  const fq = filterQuery.toString();
  const [data, reload] = useAsync(() => api<AuditPage>('GET', `${chain === 'system' ? '/v1/audit/system' : '/v1/audit'}?limit=50${from ? `&cursor=${from}` : ''}${fq ? `&${fq}` : ''}`, undefined, { noTenant: chain === 'system' }), [chain, from, fq]);
  const [filters, setFilters] = useState<Record<string, string>>(() => Object.fromEntries(FILTERS.map((f) => [f, loc.query.get(f) ?? ''])));
  const applyFilters = (e: Event) => {
    e.preventDefault();
    setQuery({ ...filters, from: undefined, seq: undefined }, false);
  };
  const record = data.state === 'ok' && selected ? data.data.items.find((r) => String(r.seq) === selected) : undefined;
  return (
    <section aria-labelledby="audit-title">
      <div class="head">
        <h1 id="audit-title">Audit log</h1>
        {app.me.superadmin && (
          <div class="segmented" role="group" aria-label="Chain">
            <a href="/audit" aria-current={chain === 'tenant' ? 'true' : undefined}>
              Tenant chain
            </a>
            <a href="/audit?chain=system" aria-current={chain === 'system' ? 'true' : undefined}>
              System chain
            </a>
          </div>
        )}
      </div>
      {chain === 'tenant' && <VerifyAndExport fq={fq} />}
      <form class="filters" role="search" onSubmit={applyFilters} aria-label="Filter records">
        {FILTERS.map((f) => (
          <Field key={f} label={f.replace('_', ' ')} name={`filter-${f}`} value={filters[f] ?? ''} onInput={(v) => setFilters({ ...filters, [f]: v })} hint={f === 'action' ? 'prefix, e.g. agent.' : f === 'since' || f === 'until' ? 'RFC 3339 time' : undefined} />
        ))}
        <button type="submit">Apply filters</button>
      </form>
      <div class="split">
        <Show value={data} what="audit records" retry={reload} isEmpty={(d) => d.items.length === 0} empty="No record matches these filters.">
          {(d) => (
            <div>
              <table>
                <caption>
                  {chain} chain, head seq {d.head_seq}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Seq</th>
                    <th scope="col">Time</th>
                    <th scope="col">Actor</th>
                    <th scope="col">Action</th>
                    <th scope="col">Target</th>
                  </tr>
                </thead>
                <tbody>
                  {d.items.map((r) => (
                    <tr key={r.seq} aria-selected={String(r.seq) === selected}>
                      <td>
                        <a href={`?${new URLSearchParams({ ...Object.fromEntries(loc.query), seq: String(r.seq) })}`}>{r.seq}</a>
                      </td>
                      <td>{fmtTime(r.occurred_at)}</td>
                      <td>{r.actor}</td>
                      <td>
                        <code>{r.action}</code>
                      </td>
                      <td>
                        {r.target_kind} {r.target_id.slice(0, 13)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {d.has_more && d.cursor && (
                <a class="button" href={`?${new URLSearchParams({ ...Object.fromEntries(loc.query), from: d.cursor, seq: '' })}`}>
                  Next page
                </a>
              )}
            </div>
          )}
        </Show>
        {record && (
          <aside class="panel" aria-labelledby="record-title">
            <h2 id="record-title">Record {record.seq}</h2>
            <dl class="detail mono">
              <dt>Action</dt>
              <dd>{record.action}</dd>
              <dt>Actor</dt>
              <dd>
                {record.actor} ({record.actor_kind})
              </dd>
              <dt>Target</dt>
              <dd>
                {record.target_kind} {record.target_id}
              </dd>
              <dt>Occurred</dt>
              <dd>{record.occurred_at}</dd>
              <dt>Meta</dt>
              <dd>{record.meta ?? '(erased)'}</dd>
              <dt>Record hash</dt>
              <dd>{record.hash}</dd>
              <dt>Previous hash</dt>
              <dd>{record.prev_hash}</dd>
              <dt>Payload hash</dt>
              <dd>{record.payload_hash ?? '—'}</dd>
              <dt>Meta commitment</dt>
              <dd>{record.meta_commitment ?? '—'}</dd>
              <dt>Signature</dt>
              <dd>{record.sig}</dd>
              <dt>Signing key</dt>
              <dd>{record.key_id}</dd>
            </dl>
          </aside>
        )}
      </div>
    </section>
  );
}

function VerifyAndExport({ fq }: { fq: string }) {
  const [report, setReport] = useState<VerifyReport | undefined>();
  const [format, setFormat] = useState('cef');
  const verify = useAction();
  const exp = useAction();
  return (
    <div class="toolbar">
      <button type="button" id="verify-now" disabled={verify.busy} onClick={() => void verify.run(async () => setReport(await api<VerifyReport>('GET', '/v1/audit/verify')))}>
        Verify now
      </button>
      <Field label="Export format" name="export-format" value={format} onInput={setFormat} options={FORMATS} />
      <button
        type="button"
        id="export"
        disabled={exp.busy}
        onClick={() =>
          void exp.run(async () => {
            const res = await api<Response>('GET', `/v1/audit/export?format=${format}${fq ? `&${fq}` : ''}`, undefined, { raw: true });
            const url = URL.createObjectURL(await res.blob());
            const a = document.createElement('a');
            a.href = url;
            a.download = `audit.${format}.txt`;
            document.body.append(a);
            a.click();
            a.remove();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
          })
        }
      >
        Download export
      </button>
      {verify.error && <ErrorBox error={verify.error} />}
      {exp.error && <ErrorBox error={exp.error} />}
      {report && (
        <div class={`report ${report.ok ? 'good' : 'bad'}`} role="status" id="verify-report">
          <strong>{report.ok ? 'Ledger verified' : 'Verification FAILED'}</strong>: chain {report.chain.ok ? 'intact' : `broken at seq ${report.chain.break_at} (${report.chain.reason})`}, {report.chain.checked} records; signatures {report.signatures.ok ? 'valid' : `bad from seq ${report.signatures.first_bad_seq}`} ({report.signatures.checked} checked); checkpoints {report.checkpoints.status} ({report.checkpoints.count}).
        </div>
      )}
    </div>
  );
}
