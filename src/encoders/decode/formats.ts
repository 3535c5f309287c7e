/** Formats a file of ledger records can be in: every ledger export format, or records as `GET /v1/audit` serves them. */
export const FILE_FORMATS = ['records', 'cef', 'leef', 'syslog', 'otlp', 'otlp_envelope', 'otlp_log_record', 'ocsf'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];
