/**
 * Errors with a stable `code`. What a person reads is chosen by code (the views, the terminal),
 * never a stack trace; logs and metrics carry the code. Every error of ours extends `CodedError`;
 * errors of libraries that carry their own string `code` (Slack's Web API, Node's system errors)
 * are read with the same `codeOf()`, so nothing reads `.code` by cast.
 */
export abstract class CodedError<C extends string = string> extends Error {
  abstract readonly code: C;
}

/** The error's string `code` (ours or a library's), or `undefined` when it has none. */
export function codeOf(err: unknown): string | undefined {
  if (err instanceof CodedError) return err.code;
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** What a refusal of bad input says beside its sentence. */
export interface InputHelp {
  /** What to type instead, when there is something useful to say (a sentence, or lines to show as they are). */
  readonly hint?: string | undefined;
  /** The usage line of the command refused, without its prefix: Slack shows it after the prefix typed. */
  readonly usage?: string | undefined;
}

export class InputError extends CodedError<'bad-input'> {
  readonly code = 'bad-input' as const;
  readonly hint?: string;
  readonly usage?: string;
  constructor(message: string, help: InputHelp = {}) {
    super(message);
    this.name = 'InputError';
    if (help.hint !== undefined) this.hint = help.hint;
    if (help.usage !== undefined) this.usage = help.usage;
  }
}

export class ConfigError extends CodedError<'bad-config'> {
  readonly code = 'bad-config' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
