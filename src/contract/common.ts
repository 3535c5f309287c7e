/** Schemas shared by many routes. */
import Type, { type TString, type TStringOptions } from 'typebox';

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String({ description: 'stable snake_case machine code' }),
        message: Type.String({ description: 'human-readable text' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'ErrorEnvelope', description: 'Body of every non-2xx answer' },
);

export const Uuid = Type.String({
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
});

/** RFC 3339 UTC with exactly 9 fractional digits (DECISIONS.md Conventions). */
export const Timestamp = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{9}Z$' });

/** `limit` of list routes: 1..1000, default 50. */
export const Limit = Type.Integer({ minimum: 1, maximum: 1000, default: 50 });

/**
 * The characters no text field of a request accepts (issue 30 item 7): C0 controls (NUL, ESC, tab,
 * newline…), DEL, C1 controls, and the bidi embeddings, overrides and isolates that make a name
 * read differently from what it is (CVE-2021-42574). PostgreSQL cannot store NUL at all (a 500
 * there, stored on SQLite); the others reach logs, SIEM lines and terminals. Lone UTF-16
 * surrogates are refused for every body string before validation (http/app.ts), and a query
 * string cannot carry one (percent-decoding yields U+FFFD).
 */
export const FORBIDDEN_TEXT_CHARS = '\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';

const TEXT_PATTERN = `^[^${FORBIDDEN_TEXT_CHARS}]*$`;

/**
 * A string field of a request: `Type.String` with the control-character rule. Every string a
 * request carries in its body or query is a Text or a narrower pattern (Uuid, Timestamp, a
 * literal); test/contract/text-rule.test.ts walks the route table to hold that. A field's own
 * `pattern` (which must be anchored with `^`) is kept and the rule added in front as a lookahead.
 */
export function Text(options: TStringOptions = {}): TString {
  const own = options.pattern;
  if (own === undefined) return Type.String({ ...options, pattern: TEXT_PATTERN });
  const source = typeof own === 'string' ? own : own.source;
  if (!source.startsWith('^')) throw new Error(`Text: a pattern must be anchored with ^, got ${source}`);
  return Type.String({ ...options, pattern: `^(?![\\s\\S]*[${FORBIDDEN_TEXT_CHARS}])${source.slice(1)}` });
}

/**
 * Text that may span lines (policy documents, notes, secret values): tab, LF and CR are allowed, every other control, C1 and bidi character
 * is not.
 */
export const MULTILINE_FORBIDDEN_CHARS = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';

/** A multi-line string field of a request; marked `x-multiline` so the text-rule test knows tab and newline are meant. */
export function MultilineText(options: TStringOptions = {}): TString {
  return Type.String({ ...options, pattern: `^[^${MULTILINE_FORBIDDEN_CHARS}]*$`, 'x-multiline': true });
}
