/**
 * Errors a user can cause or meet. Each carries a stable `code`; what a person reads is chosen
 * by code in the views, never a stack trace.
 */
export class InputError extends Error {
  readonly code = 'bad-input' as const;
  constructor(
    message: string,
    /** What to type instead, when there is something useful to say. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

export class ConfigError extends Error {
  readonly code = 'bad-config' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
