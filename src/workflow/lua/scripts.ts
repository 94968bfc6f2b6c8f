import { readFileSync } from 'node:fs';

/**
 * The stores' Lua scripts (store.ts, deciding/freeze.ts), kept as `.lua` files beside this module
 * so they can be read, linted and run as Lua (test/integration/workflow-lua.test.ts runs each on
 * Redis). Each store reads its own once, when it is first loaded. A script names what it shares
 * with another by a line `--- @include "name"` (includes/name.lua, put in its place, once), and
 * the states it takes from moves.ts and rules.ts by placeholders such as `{{MOVES.expire.from}}`
 * (a move's from-states as a comma list) or `{{REVIEWED_IN}}`, their values given by the store
 * (store.ts `storePlaceholders`), so the states are defined once; a placeholder with no value, or
 * an include not found, fails the load. This module imports nothing of the workflow: the freeze
 * store loads it from below types.ts.
 *
 * Where they are read from: `./` beside this module under tsx and vitest (src/workflow/lua/);
 * beside the bundle in dist/ (`dist/lua/`: scripts/build.ts copies them there), the bundles' own
 * `import.meta.url` being dist/main.js's or dist/cli.cjs's.
 */

/** The directory of the `.lua` files: this module's own, or `lua/` beside the bundle. */
function luaDir(): URL {
  const here = new URL('./', import.meta.url);
  return here.pathname.endsWith('/lua/') ? here : new URL('./lua/', import.meta.url);
}

/** The text of `name`.lua with its includes in place and its placeholders filled. */
export function luaScript(
  name: string,
  values: ReadonlyMap<string, string>,
  read: (file: string) => string = readLua,
): string {
  const included = new Set<string>();
  const text = read(`${name}.lua`).replace(/^--- @include "([\w-]+)"$/gm, (_, inc: string) => {
    if (included.has(inc)) return '';
    included.add(inc);
    return read(`includes/${inc}.lua`).trimEnd();
  });
  return text.replace(/\{\{([\w.]+)\}\}/g, (whole, key: string) => {
    const value = values.get(key);
    if (value === undefined) throw new Error(`${name}.lua: no value for the placeholder ${whole}`);
    return value;
  });
}

function readLua(file: string): string {
  return readFileSync(new URL(file, luaDir()), 'utf8');
}

/** The scripts named, by name, each read once (a store loads its own when it is first loaded). */
export function loadScripts<N extends string>(
  names: readonly N[],
  values: ReadonlyMap<string, string> = new Map(),
): Readonly<Record<N, string>> {
  return Object.fromEntries(names.map((n) => [n, luaScript(n, values)])) as Record<N, string>;
}
