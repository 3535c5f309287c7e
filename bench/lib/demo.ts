/**
 * A real `svc serve --seed-demo` over HTTPS for scenarios that need a credential: the demo
 * administrator logs in and issues an API key through the API. The rate limiter stays on with limits
 * far above any load, so its cost is measured but it never answers 429.
 */
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { DEMO_ADMIN } from '../../src/core/setup/startup.js';
import { loadOrCreateTls } from '../../src/serve/tls.js';
import { startSvc, type SvcHandle } from './server.js';
import type { BenchContext } from './types.js';

/** The running server, an HTTPS client that trusts only its certificate, and an API key. */
export interface DemoSvc {
  svc: SvcHandle;
  token: string;
  /** JSON call with the API key; rejects on a status ≥ 300 */
  call(method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<any>;
  stop(): Promise<void>;
}

export async function startDemoSvc(ctx: BenchContext, opts: { readyTimeoutMs?: number } = {}): Promise<DemoSvc> {
  const dataDir = join(ctx.tmpDir, 'svc-data');
  const tls = await loadOrCreateTls({ dataDir, hosts: ['127.0.0.1'] });
  const dispatcher = new Agent({ connect: { ca: tls.certPem, servername: 'localhost' } });
  let svc: SvcHandle | undefined;
  try {
    ctx.log('starting svc serve --seed-demo …');
    svc = await startSvc({
      repoRoot: ctx.repoRoot,
      dataDir,
      insecure: false,
      logFile: join(ctx.tmpDir, 'svc.log'),
      expectCertPem: tls.certPem,
      ...(opts.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: opts.readyTimeoutMs }),
      env: {
        SERVICE_SEED_DEMO: 'true',
        SERVICE_RATE_LIMIT_RPS: '10000000',
        SERVICE_RATE_LIMIT_BURST: '10000000',
        ...(ctx.options.accessLog ? {} : { SERVICE_ACCESS_LOG: 'false' }),
      },
    });
    const base = svc.url;
    const call = async (method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<any> => {
      const res = await request(`${base}${path}`, {
        method,
        dispatcher,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    };
    const session = await call('POST', '/v1/auth/login', { email: DEMO_ADMIN.email, password: DEMO_ADMIN.password });
    const key = await call('POST', '/v1/tokens', { name: 'bench' }, session.token as string);
    const token = key.token as string;
    const running = svc;
    return {
      svc: running,
      token,
      call: (method, path, body, tok = token) => call(method, path, body, tok),
      stop: async () => {
        await dispatcher.close();
        await running.stop();
      },
    };
  } catch (err) {
    await dispatcher.close();
    await svc?.stop();
    throw err;
  }
}
