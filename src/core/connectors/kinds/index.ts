/** The connector kinds: one line per kind (the runtime, routes and CLI learn every kind from here). */
import type { ConnectorKind } from './types.js';
import { filelogKind } from './filelog.js';
import { syslogKind } from './syslog.js';
import { siemKind } from './siem.js';
import { splunkHecKind } from './splunkhec.js';
import { s3ArchiveKind } from './s3archive.js';
import { otlpKind } from './otlp.js';
import { searchKind } from './search.js';
import { chronicleKind } from './chronicle.js';

/** Kind name → kind. */
export const CONNECTOR_KINDS: Readonly<Record<string, ConnectorKind>> = {
  syslog: syslogKind as unknown as ConnectorKind,
  filelog: filelogKind as unknown as ConnectorKind,
  siem: siemKind as unknown as ConnectorKind,
  splunkhec: splunkHecKind as unknown as ConnectorKind,
  s3archive: s3ArchiveKind as unknown as ConnectorKind,
  otlp: otlpKind as unknown as ConnectorKind,
  search: searchKind as unknown as ConnectorKind,
  chronicle: chronicleKind as unknown as ConnectorKind,
};

export function kindOf(name: string): ConnectorKind | undefined {
  return Object.prototype.hasOwnProperty.call(CONNECTOR_KINDS, name) ? CONNECTOR_KINDS[name] : undefined;
}

export type { ConnectorKind, ConnectorSink, KindContext, SinkItem, SinkResult } from './types.js';
