/**
 * The terminal's zod, without its compiled parsers: src/terminal/cli.ts imports this first. zod decides
 * when it builds an object schema whether that schema compiles a parser (`new Function`) on its
 * first parse, reading `jitless` then; set in `cliMain`, it came after every schema of the start
 * graph was built, and each answer parsed once still compiled one (bench/cli: ~3% of a `which`'s
 * CPU, ~4 MB). Set here, at import, before the modules that build schemas are evaluated.
 *
 * And without the memoizer zod installs for cyclic input (`zod/mini` runs without one): no schema
 * of ours is recursive (no `z.lazy`), so a parse descends no deeper than its schema whatever the
 * input holds, and each container would otherwise be wrapped at construction and walked on its
 * first parse to learn that it is not recursive (bench/cli: ~2% of a `which`'s CPU).
 */
import * as z from 'zod';

const noMemoizer: z.core.$ZodMemoizer = {
  attach() {},
  guard() {},
  alloc: (_inst, _payload, empty) => empty,
};

z.config({ jitless: true, memoizer: noMemoizer });
