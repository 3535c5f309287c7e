/**
 * A receiver implementing the documented Splunk HTTP Event Collector contract, for tests:
 * `/services/collector/event` (and `/services/collector`, `/event/1.0`) taking concatenated JSON event
 * objects, `/services/collector/raw` taking line-broken text with metadata in the query,
 * `/services/collector/ack` answering `{"acks":{"<id>":bool}}`; `Authorization: Splunk <token>`;
 * `X-Splunk-Request-Channel` (a GUID) required for raw and when acknowledgement is on; answers
 * `{"text","code"}` with the documented HTTP status per code (0 Success 200, 2 Token is required 401,
 * 3 Invalid authorization 401, 4 Invalid token 403, 5 No data 400, 6 Invalid data format 400,
 * 7 Incorrect index 400, 9 Server is busy 503, 10 Data channel is missing 400, 11 Invalid data
 * channel 400, 12 Event field is required 400, 13 Event field cannot be blank 400, 14 ACK is
 * disabled 400), `invalid-event-number` for an event-data error, events before it indexed.
 */
import type { ServerResponse } from 'node:http';
import { answer, type Got } from './harness.js';

export interface HecEvent {
  time?: number;
  host?: string;
  source?: string;
  sourcetype?: string;
  index?: string;
  event: unknown;
  channel?: string;
}

export interface HecState {
  token: string;
  indexes: string[];
  ack: boolean;
  /** answer the next requests with this code instead (e.g. 9 busy) */
  busy: number;
  /** acks become true after this many polls */
  ackAfterPolls: number;
  events: HecEvent[];
  polls: number;
  nextAck: number;
}

const STATUS: Record<number, [number, string]> = {
  0: [200, 'Success'],
  2: [401, 'Token is required'],
  3: [401, 'Invalid authorization'],
  4: [403, 'Invalid token'],
  5: [400, 'No data'],
  6: [400, 'Invalid data format'],
  7: [400, 'Incorrect index'],
  9: [503, 'Server is busy'],
  10: [400, 'Data channel is missing'],
  11: [400, 'Invalid data channel'],
  12: [400, 'Event field is required'],
  13: [400, 'Event field cannot be blank'],
  14: [400, 'ACK is disabled'],
};

function reply(res: ServerResponse, code: number, extra: Record<string, unknown> = {}): void {
  const [status, text] = STATUS[code] as [number, string];
  answer(res, status, { text, code, ...extra });
}

/** Split concatenated JSON objects (HEC's batch format) into their texts; whitespace between them is allowed. */
export function splitObjects(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  let inStr = false;
  let esc = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (inStr) {
      if (esc) esc = false;
      else if (ch === '\\') esc = true;
      else if (ch === '"') inStr = false;
      continue;
    }
    if (ch === '"') inStr = true;
    else if (ch === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0) out.push(body.slice(start, i + 1));
    } else if (depth === 0 && !/\s/.test(ch as string)) {
      out.push(body.slice(i)); // garbage outside an object: handed on to fail parsing
      return out;
    }
  }
  if (depth !== 0 && start >= 0) out.push(body.slice(start));
  return out;
}

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function hecState(token: string, opts: Partial<HecState> = {}): HecState {
  return { token, indexes: ['main', 'svc'], ack: false, busy: 0, ackAfterPolls: 0, events: [], polls: 0, nextAck: 0, ...opts };
}

export function hecHandler(st: HecState) {
  return (g: Got, res: ServerResponse): void => {
    const url = new URL(g.url, 'https://hec.invalid');
    const auth = g.headers['authorization'];
    if (auth === undefined) return reply(res, 2);
    const m = /^Splunk (.+)$/.exec(auth);
    if (m === null) return reply(res, 3);
    if (m[1] !== st.token) return reply(res, 4);
    if (st.busy !== 0) return reply(res, st.busy);
    const channel = g.headers['x-splunk-request-channel'] as string | undefined;
    if (channel !== undefined && !GUID.test(channel)) return reply(res, 11);
    const path = url.pathname.replace(/\/+$/, '');
    if (path === '/services/collector/ack') {
      if (!st.ack) return reply(res, 14);
      if (channel === undefined) return reply(res, 10);
      st.polls++;
      const ids = (JSON.parse(g.body.toString()) as { acks: number[] }).acks;
      return answer(res, 200, { acks: Object.fromEntries(ids.map((id) => [String(id), st.polls > st.ackAfterPolls])) });
    }
    if (st.ack && channel === undefined) return reply(res, 10);
    const body = g.body.toString('utf8');
    if (body.trim() === '') return reply(res, 5);
    const accepted: HecEvent[] = [];
    const ackExtra = (): Record<string, unknown> => (st.ack ? { ackId: st.nextAck++ } : {});
    if (path === '/services/collector/raw') {
      if (channel === undefined) return reply(res, 10);
      const meta: Partial<HecEvent> = {};
      for (const k of ['host', 'source', 'sourcetype', 'index'] as const) {
        const v = url.searchParams.get(k);
        if (v !== null) meta[k] = v;
      }
      if (meta.index !== undefined && !st.indexes.includes(meta.index)) return reply(res, 7);
      for (const line of body.split('\n')) if (line !== '') accepted.push({ ...meta, event: line, channel });
      st.events.push(...accepted);
      return reply(res, 0, ackExtra());
    }
    if (!['/services/collector', '/services/collector/event', '/services/collector/event/1.0'].includes(path))
      return answer(res, 404, { text: 'The requested URL was not found on this server.', code: 404 });
    const texts = splitObjects(body);
    for (let n = 0; n < texts.length; n++) {
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(texts[n] as string) as Record<string, unknown>;
      } catch {
        st.events.push(...accepted);
        return reply(res, 6, { 'invalid-event-number': n });
      }
      if (!('event' in o)) {
        st.events.push(...accepted);
        return reply(res, 12, { 'invalid-event-number': n });
      }
      if (o['event'] === '' || o['event'] === null) {
        st.events.push(...accepted);
        return reply(res, 13, { 'invalid-event-number': n });
      }
      if (typeof o['index'] === 'string' && !st.indexes.includes(o['index'])) return reply(res, 7, { 'invalid-event-number': n });
      const ev: HecEvent = { event: o['event'], channel };
      if (o['time'] !== undefined) ev.time = Number(o['time']);
      for (const k of ['host', 'source', 'sourcetype', 'index'] as const) if (typeof o[k] === 'string') ev[k] = o[k] as string;
      accepted.push(ev);
    }
    st.events.push(...accepted);
    return reply(res, 0, ackExtra());
  };
}
