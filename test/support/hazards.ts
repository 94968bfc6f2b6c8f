import type { Hazard } from '../../src/policy/impact.ts';

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
