import { NOT_ASKED_WORDS } from '../commands/index.ts';
import { deprecatedSaid, type LintAnswer, lintCounts } from '../commands/lint/index.ts';
import { quoted, terminalText } from '../text/index.ts';

/**
 * The `lint` answer as terminal text: the findings, the most severe first, each with its sentence
 * and the objects it concerns (at most 20 named, the rest counted); the environment and vhost it
 * answered for first.
 */
export function lintText(r: LintAnswer): string {
  const several = 'vhosts' in r;
  const where = `${several ? `vhosts ${r.vhosts.map(quoted).join(', ')}` : `vhost ${quoted(r.vhost)}`} of environment ${quoted(r.env)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return terminalText([`Could not lint ${where}: ${why}${r.detail ? ` (${r.detail})` : ''}.`]);
  }
  const what = r.file
    ? `The policies of ${quoted(r.file)}, as if applied to ${where}`
    : `The policies of ${where}`;
  // A listing the findings depend on could not be read: said first.
  const lines = [
    ...(r.incomplete ? [r.incomplete.message, ''] : []),
    `${what} (broker ${r.brokerVersion ?? '?'}${r.targetVersion ? `, upgrade to ${r.targetVersion} read` : ''}): ${r.policies} polic${r.policies === 1 ? 'y' : 'ies'}, ${r.objects} object${r.objects === 1 ? '' : 's'}, ${lintCounts(r.findings)}.`,
  ];
  for (const f of r.findings) {
    const vhost = several && 'vhost' in f ? `  in vhost ${quoted(String(f.vhost))}` : '';
    lines.push('', `${f.severity.toUpperCase()}  ${f.kind}${vhost}  ${f.why}`);
    if (f.objects.length > 0) {
      const more = f.objectCount - f.objects.length;
      lines.push(`    ${f.objects.map(quoted).join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
    }
  }
  const said = deprecatedSaid(r);
  if (said) lines.push('', said);
  for (const n of r.notRead) lines.push('', `Not read: ${n}.`);
  return terminalText(lines);
}
