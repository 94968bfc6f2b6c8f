/**
 * The same client suite (rabbit-client.test.ts) with the terminal command's HTTP client in place
 * of undici, as `scripts/build.ts` puts it in `dist/cli.cjs`: every request, failure, bound and
 * shutdown of the transport ends the same way on `src/rabbit/nodeHttpPool.ts`.
 */
import { vi } from 'vitest';

vi.mock('undici', async () => {
  const { Pool } = await import('../../src/rabbit/nodeHttpPool.ts');
  return { Pool };
});

await import('./rabbit-client.test.ts');
