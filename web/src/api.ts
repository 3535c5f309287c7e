/**
 * Every call to the svc API from the console. Same origin, the session rides in the HttpOnly
 * cookie (the page never sees it), mutations carry the CSRF token, the chosen tenant goes in
 * X-Service-Tenant. A 401 means the session ended: the app shows the sign-in page. A 403
 * `step_up_required` opens the WebAuthn step-up in place, then retries the call once.
 */

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

interface SessionState {
  csrf?: string;
  tenant?: string;
}

export const session: SessionState = {};

type StepUpHandler = () => Promise<boolean>;
let stepUpHandler: StepUpHandler | undefined;
let expiredHandler: (() => void) | undefined;

/** The app registers how a step-up is asked for (a dialog) and what an ended session does. */
export function onStepUp(h: StepUpHandler): void {
  stepUpHandler = h;
}
export function onExpired(h: () => void): void {
  expiredHandler = h;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface CallOptions {
  /** send no X-Service-Tenant (system routes, whoami) */
  noTenant?: boolean;
  /** answer the raw Response (downloads) */
  raw?: boolean;
  /** a 401 is an answer, not an ended session (sign-in) */
  anonymous?: boolean;
}

async function send(method: string, path: string, body: unknown, opts: CallOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (MUTATING.has(method) && session.csrf) headers['x-csrf-token'] = session.csrf;
  if (session.tenant && !opts.noTenant) headers['x-service-tenant'] = session.tenant;
  return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
}

async function errorOf(res: Response): Promise<ApiError> {
  let code = `http_${res.status}`;
  let message = `HTTP ${res.status}`;
  try {
    const data = (await res.json()) as { error?: { code?: string; message?: string } };
    if (data.error) {
      code = data.error.code ?? code;
      message = data.error.message ?? message;
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, code, message);
}

/** Call the API; resolves with the JSON answer (undefined for 204). */
export async function api<T = unknown>(method: string, path: string, body?: unknown, opts: CallOptions = {}): Promise<T> {
  let res = await send(method, path, body, opts);
  if (res.status === 403 && stepUpHandler) {
    const err = await errorOf(res.clone());
    if (err.code === 'step_up_required') {
      if (!(await stepUpHandler())) throw err;
      res = await send(method, path, body, opts);
    }
  }
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && !opts.anonymous) expiredHandler?.();
    throw err;
  }
  if (opts.raw) return res as unknown as T;
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** Every page of a cursor-paged list, up to `max` items. */
export async function listAll<T>(path: string, max = 5000, pageSize = 200): Promise<{ items: T[]; truncated: boolean }> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api<{ items: T[]; has_more: boolean; cursor?: string }>('GET', `${path}${sep}limit=${pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.items);
    if (!page.has_more || !page.cursor) return { items, truncated: false };
    if (items.length >= max) return { items, truncated: true };
    cursor = page.cursor;
  }
}

export interface Grant {
  tenant: string;
  role: string;
  permissions: string[];
}

export interface Me {
  kind: 'user' | 'token';
  user_id: string;
  actor: string;
  superadmin: boolean;
  aal?: number;
  amr?: string[];
  grants: Grant[];
}

export interface ServerInfo {
  version: string;
  api_version: string;
  setup_required: boolean;
  tls: boolean;
  engine: Record<string, string>;
}
