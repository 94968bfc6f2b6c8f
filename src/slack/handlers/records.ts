import { WorkflowError } from '../../workflow/errors.ts';
import type { CommandContext, Records } from './types.ts';

/** Runs a read of the request store or the audit trail; Redis trouble becomes `store-unavailable`. */
export async function fromStore<T>(ctx: CommandContext, read: (r: Records) => Promise<T>): Promise<T> {
  if (!ctx.records) throw new WorkflowError('store-unavailable', 'this bot has no request store configured');
  try {
    return await read(ctx.records);
  } catch (err) {
    if (err instanceof WorkflowError) throw err;
    throw new WorkflowError(
      'store-unavailable',
      'the request store (Redis) could not be read',
      {},
      { cause: err },
    );
  }
}
