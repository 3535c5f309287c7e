import type { Cli, CommandClass } from 'clipanion';
import type { BaseContext } from 'clipanion';

/** Markers around the generated part of `docs/cli.md`. */
export const REFERENCE_BEGIN = '<!-- BEGIN GENERATED: command reference (node scripts/cli-docs.mjs) -->';
export const REFERENCE_END = '<!-- END GENERATED -->';

/**
 * Renders the Markdown command reference from clipanion's own definitions (the data behind
 * `svc --clipanion=definitions` and `--help`), so the docs and the binary cannot drift (STYLE 7).
 * Details come from each command's raw `usage.details`, which is Markdown already.
 */
export function renderCliReference(cli: Cli<BaseContext>, commands: readonly CommandClass[]): string {
  const rawDetails = new Map<string, string>();
  for (const command of commands) {
    for (const path of command.paths ?? []) rawDetails.set(['svc', ...path].join(' '), dedent(command.usage?.details ?? ''));
  }
  const out: string[] = [REFERENCE_BEGIN, ''];
  const definitions = [...cli.definitions()].sort((a, b) => a.path.localeCompare(b.path));
  for (const def of definitions) {
    out.push(`### \`${def.path}\``, '');
    if (def.description) out.push(def.description.trim(), '');
    out.push('```', def.usage.trim(), '```', '');
    const details = rawDetails.get(def.path);
    if (details) out.push(details, '');
    if (def.options.length > 0) {
      out.push('| Option | Description |', '|---|---|');
      for (const option of def.options)
        out.push(`| \`${option.definition.replace(/#0/g, '<value>')}\` | ${(option.description ?? '').trim().replace(/\|/g, '\\|')} |`);
      out.push('');
    }
    if (def.examples && def.examples.length > 0) {
      out.push('Examples:', '');
      for (const [label, command] of def.examples) out.push(`- ${label.trim()}: \`${command}\``);
      out.push('');
    }
  }
  out.push(REFERENCE_END);
  return out.join('\n');
}

function dedent(text: string): string {
  const lines = text.replace(/^\n+|\s+$/g, '').split('\n');
  const indent = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)?.[0].length ?? 0));
  return lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n');
}
