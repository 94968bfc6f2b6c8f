import type { AtTrail } from '../../commands/at/index.ts';
import type { HistorySource } from '../../commands/history/index.ts';
import type { RequestsSource } from '../../commands/requests/index.ts';
import type { LinksAsWatched } from '../../links/index.ts';
import type { Logger } from '../../log/index.ts';
import type { PatternCache } from '../../policy/pattern/index.ts';
import type { Attachments } from '../attachments.ts';
import type { ChannelScope } from '../channelDefaults.ts';
import type { Deliverable } from '../delivery.ts';
import type { Environments } from '../environments.ts';
import type { ChangeRequests } from '../requests/service.ts';

/** What a `/rmq` subcommand is, seen from Slack. One module per subcommand in this folder. */

export interface CommandContext {
  /** How the user called the bot (`/rmq`, `@rmq`), for usage lines they can copy. */
  readonly prefix: string;
  readonly environments: Environments;
  /** A child logger of this request. */
  readonly logger: Logger;
  readonly requestId: string;
  /** Policy patterns read once for the app's lifetime. */
  readonly patterns?: PatternCache;
  /** The change requests and the audit trail, for `requests` and `history` (read-only). */
  readonly records?: Records;
  /** The subcommands Slack answers, for help. */
  readonly available: ReadonlySet<string>;
  /** The channel (and so its threads) the request came from, with its defaults (`/rmq use`). */
  readonly channel?: ChannelScope;
  /** Who asks, and where: a change request records them and posts its result there. */
  readonly asker?: Asker;
  /** Filing change requests (create, edit, delete); absent where the bot files none. */
  readonly changes?: ChangeRequests;
  /** The files attached to the message that mentions the bot (`plan`, `import`); a slash command has none. */
  readonly attachments?: Attachments;
}

export interface Asker {
  /** Slack user id. */
  readonly user: string;
  readonly channel: string;
  /** The thread asked in (a mention in a thread). */
  readonly threadTs?: string | undefined;
  /** A slash command's trigger: a form can be opened at once (valid 3 s). A mention has none. */
  readonly triggerId?: string | undefined;
}

/** Slack's handler of one command of the table (`src/commands/registry.ts`), filed under its name in `index.ts`. */
export interface SlackCommand {
  /** Runs after Slack was acknowledged; may take seconds. Throws InputError for bad input. */
  run(words: readonly string[], ctx: CommandContext): Promise<Deliverable>;
}

/** What `requests` and `history` read: RequestStore and AuditTrail (src/workflow) satisfy them. */
export interface Records {
  readonly requests: RequestsSource;
  /** The audit trail: `history`, and the state at an instant (`--at`). */
  readonly history: HistorySource & AtTrail;
  /** What the links watch recorded of an environment's links down (`links`: src/links/watched.ts). */
  readonly linksWatched?: (env: string) => Promise<LinksAsWatched | undefined>;
}
