/** A compiled check of a kind's config schema with short error text (no dependency on the route registry). */
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';

export interface ConfigChecker {
  check(value: unknown): boolean;
  explain(value: unknown): string;
}

export function configChecker(schema: TSchema): ConfigChecker {
  const v = Compile(schema);
  return {
    check: (value) => v.Check(value),
    explain: (value) => {
      const out: string[] = [];
      for (const e of v.Errors(value)) {
        if (e.keyword === 'boolean') continue;
        const where = e.instancePath === '' ? '(root)' : e.instancePath;
        const extra =
          e.keyword === 'additionalProperties'
            ? `: ${JSON.stringify((e.params as { additionalProperties?: unknown }).additionalProperties)}`
            : '';
        out.push(`${where} ${e.message}${extra}`);
        if (out.length >= 3) break;
      }
      return out.join('; ') || 'invalid value';
    },
  };
}
