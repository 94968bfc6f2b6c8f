import { WorkflowError } from '../../workflow/errors.ts';
import type { CommandContext, Records } from './types.ts';

const NOTHING_READ = { code: 'store-unavailable', notDone: 'nothing was read' } as const;

/** Runs a read of the request store or the audit trail; Redis trouble becomes `store-unavailable`. */
export async function fromStore<T>(ctx: CommandContext, read: (r: Records) => Promise<T>): Promise<T> {
  if (!ctx.records) throw new WorkflowError(NOTHING_READ);
  try {
    return await read(ctx.records);
  } catch (err) {
    if (err instanceof WorkflowError) throw err;
    throw new WorkflowError(NOTHING_READ, {}, { cause: err });
  }
}
