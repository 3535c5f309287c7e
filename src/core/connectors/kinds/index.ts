/** The connector kinds: one line per kind (the runtime, routes and CLI learn every kind from here). */
import type { ConnectorKind } from './types.js';
import { filelogKind } from './filelog.js';
import { syslogKind } from './syslog.js';

/** Kind name → kind. The other kinds (s3archive, splunkhec, siem, otlp, search, chronicle) plug in here, one line each. */
export const CONNECTOR_KINDS: Readonly<Record<string, ConnectorKind>> = {
  syslog: syslogKind as unknown as ConnectorKind,
  filelog: filelogKind as unknown as ConnectorKind,
};

export function kindOf(name: string): ConnectorKind | undefined {
  return Object.prototype.hasOwnProperty.call(CONNECTOR_KINDS, name) ? CONNECTOR_KINDS[name] : undefined;
}

export type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';
