import { InputError } from '../core/index.ts';

/**
 * One segment of a management API path (a vhost, a queue, an exchange, a policy name),
 * percent-encoded: vhost "/" -> `%2F`, "a/b" -> `a%2Fb`, "+" stays "+". Every path the client
 * builds goes through here.
 *
 * Refused, before any call, is what the HTTP API cannot address. Seen on 3.10.8 and 4.0.5: `%2E`
 * is decoded and the segment normalised away before routing, so a vhost named "." turns
 * `/api/policies/%2E` into `/api/policies` (every vhost's policies, answered 200) and ".." climbs
 * a level (406 or 405). An empty segment collapses the same way. Such names still show in
 * listings, which is where the bot reads them from.
 */
export function pathSegment(value: string, what = 'name'): string {
  if (value === '.' || value === '..' || value === '') {
    throw new InputError(
      `The broker's HTTP API cannot address a ${what} named ${JSON.stringify(value)}: the address would be normalised to another one.`,
      {
        hint:
          value === ''
            ? undefined
            : 'Such names can be seen in listings only; the bot cannot ask about them one by one.',
      },
    );
  }
  return encodeURIComponent(value);
}
