/** Shared steps of the connector tests: a JSON client, ledger records on demand, waiting for health. */
import { call, type TestServer } from '../../helpers/server.js';

// The receivers are on loopback: the egress guard allows loopback only under the development flag
// (inherited by the servers the tests start).
process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';

export type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; text: string; json: () => any }>;

export function api(server: TestServer, token: string, tenant?: string): Api {
  return (method, path, body) =>
    call(server, method, path, {
      headers: {
        authorization: `Bearer ${token}`,
        ...(tenant ? { 'x-service-tenant': tenant } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
}

/** Appends `n` records to the tenant's ledger (one agent created per record), `parallel` at a time. */
export async function makeRecords(tenantApi: Api, n: number, prefix: string, parallel = 4): Promise<void> {
  let i = 0;
  const worker = async (): Promise<void> => {
    while (i < n) {
      const k = i++;
      const r = await tenantApi('POST', '/v1/agents', { name: `${prefix}-${k}` });
      if (r.status !== 201) throw new Error(`agent create answered ${r.status}: ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** True when every ledger lane of a health item delivered up to its head and holds nothing open. */
export function caughtUp(h: any): boolean {
  const lanes = (h?.lanes ?? []).filter((l: any) => l.source === 'ledger');
  return lanes.length > 0 && lanes.every((l: any) => l.head_seq > 0 && l.delivered_seq >= l.head_seq && l.queued === 0);
}

/** Polls the health of one connector until `pred` holds (bounded). */
export async function waitHealth(admin: Api, name: string, pred: (h: any) => boolean, timeoutMs = 30_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  for (;;) {
    const r = await admin('GET', `/v1/connectors/health?name=${name}`);
    if (r.status === 200) {
      last = r.json().items[0];
      if (pred(last)) return last;
    }
    if (Date.now() > deadline) throw new Error(`connector ${name} health did not reach the expected state: ${JSON.stringify(last)}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** The ledger seq a syslog/CEF/LEEF line carries. */
export function seqOf(line: string): number {
  const m = /(?:\bolvSeq=|\bseq="|"seq":)(\d+)/.exec(line);
  if (!m) throw new Error(`no seq in ${line.slice(0, 200)}`);
  return Number(m[1]);
}
