import * as z from 'zod';
import { MAX_FILE_BYTES } from '../definitions/index.ts';
import type { Sent } from './slackCalls.ts';

/**
 * The files attached to the message that mentions the bot (`@rmq plan`, `@rmq import --reason …`
 * with a definitions file): named by the event (`event.files[].id`), described by `files.info`
 * (its size and private download URL, asked with the bot token: the event's own copy may be
 * partial, `file_access: check_file_info`), then downloaded with the bot token
 * (`Authorization: Bearer xoxb-…`, Slack's `url_private_download`), within MAX_FILE_BYTES:
 * refused from the size Slack reports before a byte is fetched, and cut off when the bytes run
 * over it anyway. Slack answers a download it does not authorise (no `files:read`, another
 * workspace's file) with its sign-in page, not an error status: HTML is refused as such.
 */

/** A file as the event names it. */
export interface AttachedRef {
  readonly id: string;
  readonly name?: string;
}

export type Downloaded =
  | { readonly ok: true; readonly name: string; readonly bytes: Buffer }
  | { readonly ok: false; readonly why: string };

/** What a command reads the mention's files through. */
export interface Attachments {
  readonly files: readonly AttachedRef[];
  read(file: AttachedRef): Promise<Downloaded>;
}

const EventFiles = z
  .array(z.object({ id: z.string().min(1), name: z.string().optional() }).passthrough())
  .max(20);

/** The files an event names (`event.files`), parsed at the boundary; none when absent or malformed. */
export function attachedRefs(event: unknown): AttachedRef[] {
  const files = (event as { files?: unknown } | null)?.files;
  const parsed = EventFiles.safeParse(files ?? []);
  return parsed.success ? parsed.data.map((f) => ({ id: f.id, ...(f.name ? { name: f.name } : {}) })) : [];
}

const FileInfo = z.object({
  file: z
    .object({
      id: z.string(),
      name: z.string().optional(),
      size: z.number().int().nonnegative(),
      url_private_download: z.string().url().optional(),
      url_private: z.string().url().optional(),
    })
    .passthrough(),
});

export interface DownloaderOptions {
  /** The bot token (`xoxb-…`): the only credential the download uses. */
  readonly token: string;
  /** A Web API call (`Delivery.call`): `files.info`. */
  readonly call: (method: string, args: Record<string, unknown>) => Promise<Sent & { response?: unknown }>;
  readonly maxBytes?: number;
  /** One download's time, headers and body. Default 30 s. */
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** Reads one attached file: `files.info`, then its bytes with the bot token, never more than the limit. */
export function fileDownloader(options: DownloaderOptions): (file: AttachedRef) => Promise<Downloaded> {
  const limit = options.maxBytes ?? MAX_FILE_BYTES;
  const get = options.fetch ?? fetch;
  return async (ref) => {
    const shown = ref.name ?? ref.id;
    const info = await options.call('files.info', { file: ref.id });
    if (!info.ok)
      return {
        ok: false,
        why: `Slack did not describe the attached file ${shown} (${info.error}): the bot needs the files:read scope (slack/manifest.yml) and the file shared in this channel.`,
      };
    const parsed = FileInfo.safeParse(info.response);
    const url = parsed.success
      ? (parsed.data.file.url_private_download ?? parsed.data.file.url_private)
      : undefined;
    if (!parsed.success || !url)
      return { ok: false, why: `Slack gave no download address for the attached file ${shown}.` };
    const { size, name = shown } = parsed.data.file;
    if (size > limit)
      return {
        ok: false,
        why: `The attached file ${name} is ${mb(size)}, over the ${mb(limit)} the bot reads: attach only the vhosts to compare (one vhost's export: GET /api/definitions/VHOST).`,
      };
    let res: Response;
    try {
      res = await get(url, {
        headers: { authorization: `Bearer ${options.token}` },
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (err) {
      return {
        ok: false,
        why: `The attached file ${name} could not be downloaded from Slack (${err instanceof Error ? err.name : 'network error'}).`,
      };
    }
    const type = res.headers.get('content-type') ?? '';
    if (!res.ok || type.startsWith('text/html')) {
      await res.body?.cancel().catch(() => undefined);
      return {
        ok: false,
        why: `Slack did not hand over the attached file ${name} (${res.ok ? 'its sign-in page instead' : `HTTP ${res.status}`}): the bot needs the files:read scope (slack/manifest.yml).`,
      };
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const reader = res.body?.getReader();
    if (reader) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.byteLength;
        if (total > limit) {
          await reader.cancel().catch(() => undefined);
          return {
            ok: false,
            why: `The attached file ${name} runs over the ${mb(limit)} the bot reads: attach only the vhosts to compare.`,
          };
        }
        chunks.push(Buffer.from(value));
      }
    }
    return { ok: true, name, bytes: Buffer.concat(chunks) };
  };
}
