/**
 * A change request as the store keeps it (a pending delete of `audit-retention`, filed with a
 * preview of three objects), for tests of what reads or stores one without filing it through the
 * workflow; `over` changes what the test is about.
 */
import type { ChangeRequest } from '../../src/workflow/types.ts';

export const changeRequest = (over: Partial<ChangeRequest> = {}): ChangeRequest => ({
  id: 'r-0123456789abcdef0123',
  env: 'prod',
  vhost: '/',
  layer: 'user',
  action: 'delete',
  policy: 'audit-retention',
  before: { pattern: '^orders\\.', applyTo: 'queues', priority: 10, definition: { 'message-ttl': 60000 } },
  after: null,
  preview: {
    brokerVersion: '3.10.8',
    summary: {} as ChangeRequest['preview']['summary'],
    warnings: [],
    diff: {} as ChangeRequest['preview']['diff'],
    objects: 3,
    unpredictable: 0,
  },
  requester: { user: 'U0ALICE', reason: 'retention moves to the archive' },
  origin: { channel: 'C0INC' },
  state: 'pending',
  createdAt: '2026-11-30T12:00:00.000Z',
  expiresAt: '2026-12-01T12:00:00.000Z',
  updatedAt: '2026-11-30T12:00:00.000Z',
  ...over,
});
