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
