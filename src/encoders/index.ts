/** The encoders: one `Encoder` per format, the severity map, the per-surface token registry. */
export type { DeviceIdentity, EgressEvent, EncodeOptions, Encoder, Severity } from './encoder.js';
export { DETERMINED_SEVERITIES, SEVERITY, type SeverityRow } from './severity.js';
export { PctC0DecodeError, WIRE_ENC, pctC0Decode, pctC0DecodeBytes, pctC0Encode } from './pct-c0.js';
export {
  INTEGRITY_FIELD_NAMES, epochMillis, integrityFields, ledgerDevice, ledgerSeverity,
  type IntegrityFieldName, type IntegrityFields,
} from './ledger-fields.js';
export { CEF_HEADER_MAX, cefEncoder } from './cef.js';
export { LEEF_DELIMITER, leefEncoder } from './leef.js';
export {
  SyslogConfigError, SyslogPayloadTooLargeError, checkPayloadBudget, octetCountingFrame, octetCountingPrefix,
  syslogCefEncoder, syslogEncoder,
  syslogLeefEncoder, syslogPri, type SyslogEncodeOptions, type SyslogEncoder,
} from './syslog.js';
export { otlpEncoder, otlpEnvelopeEncoder } from './otlp.js';
export { otlpLogRecordEncoder } from './otlp-log-record.js';
export { ocsfEncoder } from './ocsf.js';
export { jsonEncoder, jsonProjectionEncoder } from './json.js';
export { asimEncoder } from './asim.js';
export { ecsEncoder } from './ecs.js';
export { udmEncoder } from './udm.js';
export {
  CorruptFormatTokenError, FormatTokenError, SURFACES, SURFACE_NAMES, acceptedTokens, defaultFormat, encoderFor,
  parseFormatToken, type Surface,
} from './registry.js';
