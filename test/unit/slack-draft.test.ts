import { describe, expect, it } from 'vitest';
import { encodeMeta, parseDraft } from '../../src/slack/views/forms.ts';

describe('a draft carried through the reason form', () => {
  it('keeps an edit --set __proto__=… as a key of the patch, for the validation to refuse (never dropped)', () => {
    const set = JSON.parse('{"__proto__": {"max-length": 1}, "message-ttl": 60000}') as Record<
      string,
      unknown
    >;
    const draft = parseDraft(
      encodeMeta({
        action: 'edit',
        policy: 'p',
        env: 'lab',
        vhost: '/',
        layer: 'user',
        origin: { channel: 'C0X' },
        fields: { definitionPatch: { set, unset: [] } },
      }),
    );
    const kept = draft?.fields.definitionPatch?.set ?? {};
    expect(Object.keys(kept)).toEqual(['__proto__', 'message-ttl']);
    expect(Object.getPrototypeOf(kept)).toBe(Object.prototype);
  });
});
