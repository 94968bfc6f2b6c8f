import { readFileSync } from 'node:fs';
import { MOVES } from '../moves.ts';
import { REVIEWED_IN } from '../rules.ts';

/**
 * The request store's and the freeze store's Lua scripts (store.ts, deciding/freeze.ts), kept as `.lua` files beside this module so they can
 * be read, linted and run as Lua (test/integration/workflow-lua.test.ts runs each against Redis).
 * Read once, when the store is first loaded. A script names what it shares with another by a line
 * `--- @include "name"` (includes/name.lua, put in its place, once), and the states it takes from
 * moves.ts and rules.ts by placeholders, `{{MOVES.expire.from}}` (a move's from-states as a comma
 * list), `{{MOVES.expire.to}}`, `{{MOVES.approve.deadline}}`, `{{REVIEWED_IN}}`, so the states are
 * defined once; a placeholder not known, or an include not found, fails the load.
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

/** The values a placeholder `{{NAME}}` stands for. */
export function placeholders(): ReadonlyMap<string, string> {
  const values = new Map<string, string>([['REVIEWED_IN', REVIEWED_IN]]);
  for (const [name, move] of Object.entries(MOVES)) {
    values.set(`MOVES.${name}.from`, move.from.join(','));
    values.set(`MOVES.${name}.to`, move.to);
    values.set(`MOVES.${name}.deadline`, move.deadline);
  }
  return values;
}

/** The text of `name`.lua with its includes in place and its placeholders filled. */
export function luaScript(name: string, read: (file: string) => string = readLua): string {
  const included = new Set<string>();
  const text = read(`${name}.lua`).replace(/^--- @include "([\w-]+)"$/gm, (_, inc: string) => {
    if (included.has(inc)) return '';
    included.add(inc);
    return read(`includes/${inc}.lua`).trimEnd();
  });
  const values = placeholders();
  return text.replace(/\{\{([\w.]+)\}\}/g, (whole, key: string) => {
    const value = values.get(key);
    if (value === undefined) throw new Error(`${name}.lua: no value for the placeholder ${whole}`);
    return value;
  });
}

function readLua(file: string): string {
  return readFileSync(new URL(file, luaDir()), 'utf8');
}

/** Every script of the stores, by name, read once. */
export const STORE_SCRIPTS = [
  'transition',
  'approve',
  'breakGlass',
  'hold',
  'create',
  'createRevert',
  'review',
  'attachMessage',
  'freeze',
  'freezeTake',
] as const;
export type StoreScript = (typeof STORE_SCRIPTS)[number];

let loaded: Readonly<Record<StoreScript, string>> | undefined;

export function storeScripts(): Readonly<Record<StoreScript, string>> {
  loaded ??= Object.fromEntries(STORE_SCRIPTS.map((n) => [n, luaScript(n)])) as Record<StoreScript, string>;
  return loaded;
}
