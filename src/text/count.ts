/**
 * A number with its noun in the right number ("1 object", "2 objects"): never "object(s)". The
 * one home for plurals in the views of the terminal and Slack.
 */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The verb after `count`: "1 object changes", "2 objects change". */
export function agree(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

/**
 * Every name (`render`ed, joined), or how many when together they would take more than `max`
 * characters: `vhost "a"`, `vhosts "a", "b"`, `50 vhosts` (and `counted` after the count).
 */
export function namesOrCount(
  names: readonly string[],
  render: (name: string) => string,
  one: string,
  options: { readonly many?: string; readonly max?: number; readonly counted?: string } = {},
): string {
  const many = options.many ?? `${one}s`;
  const joined = names.map(render).join(', ');
  if (joined.length <= (options.max ?? 400)) return `${names.length === 1 ? one : many} ${joined}`;
  return `${count(names.length, one, many)}${options.counted ?? ''}`;
}
