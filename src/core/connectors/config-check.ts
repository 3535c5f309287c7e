/**
 * A compiled check of a kind's config schema with short error text (no dependency on the route registry; the error text is the routes').
 */
import { Compile } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { explainErrors } from '../../contract/schema-errors.js';

export interface ConfigChecker {
  check(value: unknown): boolean;
  explain(value: unknown): string;
}

export function configChecker(schema: TSchema): ConfigChecker {
  const v = Compile(schema);
  return {
    check: (value) => v.Check(value),
    explain: (value) => explainErrors(v, value),
  };
}
