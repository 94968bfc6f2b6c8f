import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { InputError } from '../core/index.ts';
import { type LoggedRecords, recordDigest } from './trail.ts';
import { AuditRecordSchema } from './types.ts';

/**
 * The bot's own log as the audit trail's anchor outside Redis (`history --verify --against FILE`):
 * every record appended is logged as one JSON line with an `audit` object (`audit.ts`). A line
 * may carry a prefix before its JSON (a container runtime's timestamp and stream); lines without
 * an `audit` object are other log lines. Give the logs of every replica, concatenated, since the
 * trail began: a record appended by a process whose log is not there reads as extra.
 */

/** The most read: a log this large should be cut to the trail's period first. */
export const MAX_LOG_BYTES = 4 * 1024 ** 3;
/** One line: an audit record of thousands of objects stays well below it. */
export const MAX_LINE_BYTES = 64 * 1024 ** 2;

export async function readAuditLog(file: string): Promise<LoggedRecords> {
  const size = await stat(file).then(
    (s) => s.size,
    (err: NodeJS.ErrnoException) => {
      throw new InputError(`--against ${file}: cannot read it (${err.code ?? err.message}).`);
    },
  );
  if (size > MAX_LOG_BYTES)
    throw new InputError(
      `--against ${file}: ${size} bytes, more than the ${MAX_LOG_BYTES} read; give only the lines with an "audit" object (grep '"audit":').`,
    );
  const digests = new Map<string, Set<string>>();
  let unreadableLines = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    const brace = line.indexOf('{');
    if (brace < 0 || !line.includes('"audit"')) continue;
    if (line.length > MAX_LINE_BYTES) {
      unreadableLines++;
      continue;
    }
    let audit: unknown;
    try {
      audit = (JSON.parse(line.slice(brace)) as { audit?: unknown }).audit;
    } catch {
      continue; // not a JSON line of ours
    }
    if (audit === undefined) continue;
    const parsed = AuditRecordSchema.safeParse(audit);
    if (!parsed.success) {
      unreadableLines++;
      continue;
    }
    const known = digests.get(parsed.data.id) ?? new Set<string>();
    known.add(recordDigest(parsed.data));
    digests.set(parsed.data.id, known);
  }
  return { file, digests, unreadableLines };
}
