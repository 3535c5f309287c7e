/** Schemas shared by many routes. */
import Type from 'typebox';

export const ErrorEnvelope = Type.Object(
  { error: Type.Object({ code: Type.String({ description: 'stable snake_case machine code' }), message: Type.String({ description: 'human-readable text' }) }, { additionalProperties: false }) },
  { additionalProperties: false, $id: 'ErrorEnvelope', description: 'Body of every non-2xx answer' },
);

export const Uuid = Type.String({ format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });

/** RFC 3339 UTC with exactly 9 fractional digits (DECISIONS.md Conventions). */
export const Timestamp = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{9}Z$' });

/** `limit` of list routes: 1..1000, default 50. */
export const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 50 });
