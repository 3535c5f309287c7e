/**
 * W3C Trace Context (Level 1, `traceparent` version 00): parsing only. A request carrying a valid
 * `traceparent` has it written into the meta of the ledger record it causes (`ctx.audit`), so
 * the ledger can answer what happened under a trace.
 */
export const TRACE_CONTEXT_VERSION = '00';
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export interface TraceParent {
  version: string;
  trace_id: string;
  parent_id: string;
  flags: string;
}

/** The parsed header, or undefined when it is not a valid version-00 traceparent (all-zero ids are invalid). */
export function parseTraceparent(value: string | undefined): TraceParent | undefined {
  if (value === undefined) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags] = m as unknown as [string, string, string, string, string];
  if (version !== TRACE_CONTEXT_VERSION || /^0+$/.test(traceId) || /^0+$/.test(parentId)) return undefined;
  return { version, trace_id: traceId, parent_id: parentId, flags };
}
