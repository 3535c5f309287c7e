/** What a handler may return besides a plain JSON value: a status, headers, text or a stream. */

export type ReplyBody =
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; value: Uint8Array | string }
  | { kind: 'stream'; value: AsyncIterable<Uint8Array | string> }
  | { kind: 'empty' };

export const REPLY = Symbol('svc.reply');

export interface Reply {
  readonly [REPLY]: true;
  status: number;
  headers: Record<string, string>;
  contentType?: string;
  body: ReplyBody;
}

/** Constructors for non-default answers. */
export const reply = {
  json(value: unknown, status = 200, headers: Record<string, string> = {}): Reply {
    return { [REPLY]: true, status, headers, contentType: 'application/json', body: { kind: 'json', value } };
  },
  text(value: string | Uint8Array, contentType = 'text/plain; charset=utf-8', status = 200, headers: Record<string, string> = {}): Reply {
    return { [REPLY]: true, status, headers, contentType, body: { kind: 'bytes', value } };
  },
  /** A streamed body written with backpressure; the iterator is closed when the client goes away. */
  stream(value: AsyncIterable<Uint8Array | string>, contentType: string, status = 200, headers: Record<string, string> = {}): Reply {
    return { [REPLY]: true, status, headers, contentType, body: { kind: 'stream', value } };
  },
  empty(status = 204, headers: Record<string, string> = {}): Reply {
    return { [REPLY]: true, status, headers, body: { kind: 'empty' } };
  },
};

/** True when a handler returned a Reply rather than a bare JSON value. */
export function isReply(value: unknown): value is Reply {
  return typeof value === 'object' && value !== null && (value as { [REPLY]?: unknown })[REPLY] === true;
}
