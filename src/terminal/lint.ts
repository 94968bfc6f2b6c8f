import { readFile } from 'node:fs/promises';
import { type LintResult, lintCounts } from '../../commands/lint.ts';
import { NOT_ASKED_WORDS } from '../../commands/words.ts';
import { MAX_FILE_BYTES } from '../definitions/read.ts';
import { InputError } from '../errors.ts';
import { quoted, terminalText } from '../text/asWritten.ts';

/**
 * The `lint` answer as terminal text: the findings, the most severe first, each with its sentence
 * and the objects it concerns (at most 20 named, the rest counted); the environment and vhost it
 * answered for first.
 */
export function lintText(r: LintResult): string {
  const where = `vhost ${quoted(r.vhost)} of environment ${quoted(r.env)}`;
  if (r.answer === 'not-asked') {
    const why = NOT_ASKED_WORDS[r.why ?? 'unreachable'] ?? 'the broker could not be asked';
    return terminalText([`Could not lint ${where}: ${why}${r.detail ? ` (${r.detail})` : ''}.`]);
  }
  const what = r.file
    ? `The policies of ${quoted(r.file)}, as if applied to ${where}`
    : `The policies of ${where}`;
  const lines = [
    `${what} (broker ${r.brokerVersion ?? '?'}): ${r.policies} polic${r.policies === 1 ? 'y' : 'ies'}, ${r.objects} object${r.objects === 1 ? '' : 's'}, ${lintCounts(r.findings)}.`,
  ];
  for (const f of r.findings) {
    lines.push('', `${f.severity.toUpperCase()}  ${f.kind}  ${f.why}`);
    if (f.objects.length > 0) {
      const more = f.objectCount - f.objects.length;
      lines.push(`    ${f.objects.map(quoted).join(', ')}${more > 0 ? `, and ${more} more` : ''}`);
    }
  }
  for (const n of r.notRead) lines.push('', `Not read: ${n}.`);
  return terminalText(lines);
}

/**
 * `lint FILE`'s bytes: a path, or `-` for standard input; one byte over the reader's limit at most
 * is kept, so the reader refuses a file too large by its size.
 */
export async function readLintFile(file: string): Promise<Buffer> {
  const limit = MAX_FILE_BYTES + 1;
  if (file === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      chunks.push(b);
      size += b.length;
      if (size >= limit) break;
    }
    return Buffer.concat(chunks).subarray(0, limit);
  }
  try {
    return (await readFile(file)).subarray(0, limit);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(
      code === 'ENOENT'
        ? `No file ${quoted(file)}: give the path of a definitions file, or - for standard input.`
        : `The file ${quoted(file)} cannot be read (${code ?? String(err)}).`,
    );
  }
}
