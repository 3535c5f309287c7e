/** RFC 9110 §15 reason phrases for the status line uWS writes verbatim. */
import { STATUS_CODES } from 'node:http';

const cache = new Map<number, string>();

/** `404` → `404 Not Found`. */
export function statusLine(status: number): string {
  let line = cache.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    cache.set(status, line);
  }
  return line;
}
