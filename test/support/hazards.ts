import type { Hazard, Impact } from '../../src/policy/impact/impact.ts';

/**
 * The hazards of a queue at `max-length` (drop-head) whose dead-letter exchange does not exist,
 * the case the unit, integration and e2e suites each check at their level: the oldest pushed
 * out and lost, and the missing target.
 */
export function fullWithMissingDeadLetter(limit: number, exchange: string): Hazard[] {
  return [
    {
      effect: 'full',
      because: 'max-length',
      limit,
      overflow: 'drop-head',
      refused: false,
      dropped: 'lost',
      exchange,
    },
    { effect: 'missing-target', key: 'dead-letter-exchange', target: exchange },
  ];
}

/**
 * What a `max-length` cap (drop-head) below the ready messages does when its dead-letter exchange
 * does not exist, the second case, checked at each level: the excess removed at once and
 * lost, and the missing target.
 */
export function lostToMissingDeadLetter(messages: number, limit: number, exchange: string): Impact[] {
  return [
    { effect: 'drop', messages, fate: 'lost', exchange, because: 'max-length', limit },
    { effect: 'missing-target', key: 'dead-letter-exchange', target: exchange },
  ];
}

/** The first case: a `max-length` cap below the ready messages, the excess dead-lettered to `exchange`. */
export function deadLetteredOver(limit: number, messages: number, exchange: string): Impact {
  return { effect: 'drop', messages, fate: 'dead-lettered', exchange, because: 'max-length', limit };
}
