import { orStoreUnavailable, storeUnavailable } from '../../workflow/index.ts';
import type { CommandContext, Records } from './types.ts';

/** Runs a read of the request store or the audit trail; Redis trouble becomes `store-unavailable`. */
export async function fromStore<T>(ctx: CommandContext, read: (r: Records) => Promise<T>): Promise<T> {
  const { records } = ctx;
  if (!records) throw storeUnavailable('nothing was read');
  return orStoreUnavailable('nothing was read', () => read(records));
}
