/** The first few errors of a compiled TypeBox validator as one short line, e.g. `/limit must be <= 1000`. */
import type { Validator } from 'typebox/compile';

export function explainErrors(validator: Pick<Validator, 'Errors'>, value: unknown, max = 3): string {
  const out: string[] = [];
  for (const e of validator.Errors(value)) {
    // `schema is false` repeats the additionalProperties error with less detail.
    if (e.keyword === 'boolean') continue;
    const where = e.instancePath === '' ? '(root)' : e.instancePath;
    const extra =
      e.keyword === 'additionalProperties'
        ? `: ` + `${JSON.stringify((e.params as { additionalProperties?: unknown }).additionalProperties)}`
        : '';
    out.push(`${where} ${e.message}${extra}`);
    if (out.length >= max) break;
  }
  return out.join('; ') || 'invalid value';
}
