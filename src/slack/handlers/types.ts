import type { HistorySource } from '../../../commands/history.ts';
import type { RequestsSource } from '../../../commands/requests.ts';
import type { WhichBroker } from '../../../commands/which.ts';
import type { Logger } from '../../log.ts';
import type { PatternCache } from '../../policy/pattern.ts';
import type { PreviewBroker } from '../../preview/preview.ts';
import type { ChannelScope } from '../channelDefaults.ts';
import type { Deliverable } from '../delivery.ts';
import type { ChangeRequests } from '../requests/service.ts';

/** What a `/rmq` subcommand is, seen from Slack. One module per subcommand in this folder. */

/** The management API as the Slack commands use it. ManagementClient satisfies it. */
export interface SlackBroker extends WhichBroker, PreviewBroker {
  whoami(): Promise<unknown>;
  /** The same broker with one budget for every call of one question (ManagementClient.forQuestion). */
  forQuestion?(budgetMs: number): SlackBroker;
}

export interface EnvironmentBroker {
  readonly name: string;
  readonly broker: SlackBroker;
}

export interface Environments {
  /** `--env`, or the only (first) environment; an unknown name is an InputError. */
  pick(name: string | undefined): EnvironmentBroker;
}

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

/** A file that goes with an answer (the full list of a long preview), uploaded beside it. */
export interface AttachedFile {
  /** With its extension (`preview-delete-x.csv`): Slack derives the file's type from it. */
  readonly filename: string;
  /** Shown by Slack as plain text. */
  readonly title: string;
  readonly content: string;
}

export interface SlackCommand {
  readonly name: string;
  /** Runs after Slack was acknowledged; may take seconds. Throws InputError for bad input. */
  run(words: readonly string[], ctx: CommandContext): Promise<Deliverable>;
}

/** What `requests` and `history` read: RequestStore and AuditTrail (src/workflow) satisfy them. */
export interface Records {
  readonly requests: RequestsSource;
  readonly history: HistorySource;
}
