/**
 * Third-party SARIF validation for tests: the official SARIF 2.1.0 JSON schema (draft 2020-12, as
 * shipped by `@microsoft/sarif-multitool`) compiled with ajv, and `sarif-multitool validate` with its
 * rule set. The multitool exits 0 even for an invalid log, so its output log is read and every
 * `error`-level result is returned.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { REPO_ROOT, tempDir } from './server.js';

const require = createRequire(import.meta.url);
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The schema file of the installed multitool package. */
export function sarifSchemaPath(): string {
  return path.join(path.dirname(require.resolve('@microsoft/sarif-multitool-linux/package.json')), 'sarif-2.1.0.json');
}

let validator: ((doc: unknown) => boolean) & { errors?: unknown } | undefined;

/** ajv errors of a SARIF log against the official schema ([] when valid). */
export function sarifSchemaErrors(doc: unknown): unknown[] {
  if (!validator) {
    const ajv = new Ajv2020({ allErrors: true, strict: false });
    addFormats(ajv);
    validator = ajv.compile(JSON.parse(readFileSync(sarifSchemaPath(), 'utf8')) as object);
  }
  return validator(doc) ? [] : ((validator.errors as unknown[]) ?? []);
}

const MULTITOOL = path.join(REPO_ROOT, 'node_modules', '.bin', 'sarif-multitool');

/**
 * The multitool's own executable. Its `.bin` wrapper runs it through a shell, which splits an
 * argument at a space or `;` (a file name with a space, `--rule-kind "Gh;Sarif"`).
 */
function multitoolBinary(): string {
  return require('@microsoft/sarif-multitool') as string;
}

/** Why the multitool cannot run here, or undefined when it can. */
export function multitoolSkip(): string | undefined {
  if (!existsSync(MULTITOOL)) return '@microsoft/sarif-multitool is not installed';
  return undefined;
}

/**
 * `sarif-multitool validate FILE` with the SARIF rules and GitHub's (`--rule-kind Gh;Sarif`; GitHub
 * Advanced Security's GH rules run only when asked): the error-level results of its output log.
 */
export function multitoolErrors(file: string): Array<{ ruleId: string; text: string }> {
  const out = path.join(tempDir('svc-sarif-'), 'validation.sarif');
  const args = ['validate', file, '-o', out, '--log', 'ForceOverwrite', '--rule-kind', 'Gh;Sarif'];
  const run = spawnSync(multitoolBinary(), args, { encoding: 'utf8', timeout: 120_000 });
  if (!existsSync(out)) throw new Error(`sarif-multitool wrote no output (exit ${run.status}): ${run.stdout}\n${run.stderr}`);
  const log = JSON.parse(readFileSync(out, 'utf8')) as {
    runs: Array<{ results?: Array<{ ruleId: string; level?: string; message: { text?: string; arguments?: string[] } }> }>;
  };
  return (log.runs[0]?.results ?? [])
    .filter((r) => r.level === 'error')
    .map((r) => ({ ruleId: r.ruleId, text: r.message.text ?? (r.message.arguments ?? []).join(' ') }));
}
