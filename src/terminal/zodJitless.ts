/**
 * The terminal's zod, without its compiled parsers: src/terminal/cli.ts imports this first. zod decides
 * when it builds an object schema whether that schema compiles a parser (`new Function`) on its
 * first parse, reading `jitless` then; set in `cliMain`, it came after every schema of the start
 * graph was built, and each answer parsed once still compiled one (bench/cli: ~3% of a `which`'s
 * CPU, ~4 MB). Set here, at import, before the modules that build schemas are evaluated.
 */
import * as z from 'zod';

z.config({ jitless: true });
