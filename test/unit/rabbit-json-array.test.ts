import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonArraySplitter, parseJsonArrayStream } from '../../src/rabbit/jsonArrayStream.ts';

async function* chunksOf(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const p of [...points, bytes.length]) {
    if (p > from) yield bytes.subarray(from, p);
    from = p;
  }
}

async function collect(it: AsyncIterable<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const parseAll = (text: string) => collect(parseJsonArrayStream(chunksOf(Buffer.from(text, 'utf8'), [])));

// Strings that stress the splitter: brackets, commas, quotes, escapes, multi-byte characters.
const trickyString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', ':', ' ', '\n', 'é', '😀', '\u2028', '\u0000'),
  }),
);

const jsonLeaf = fc.oneof(
  trickyString,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);

const { value: jsonValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLeaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
  ),
}));

const queueLike = fc.dictionary(trickyString, jsonValue, { maxKeys: 6 });

describe('parseJsonArrayStream', () => {
  it('equals JSON.parse for arrays of objects cut into arbitrary chunks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(queueLike, { maxLength: 8 }),
        fc.constantFrom(undefined, 0, 1, 2, '\t'),
        fc.array(fc.nat(), { maxLength: 30 }),
        async (items, indent, cuts) => {
          const text = `${indent === undefined ? '' : ' \n'}${JSON.stringify(items, null, indent)}\n`;
          const bytes = Buffer.from(text, 'utf8');
          const got = await collect(parseJsonArrayStream(chunksOf(bytes, cuts)));
          expect(got).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('equals JSON.parse for arrays of any JSON values, one byte at a time', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(jsonValue, { maxLength: 6 }), async (items) => {
        const text = JSON.stringify(items);
        const bytes = Buffer.from(text, 'utf8');
        const cuts = Array.from({ length: bytes.length }, (_, i) => i);
        expect(await collect(parseJsonArrayStream(chunksOf(bytes, cuts)))).toEqual(JSON.parse(text));
      }),
      { numRuns: 150 },
    );
  });

  it.each([
    ['[]', []],
    [' [ ] ', []],
    ['[1,"a,]",true,null,{"b":[1,{"c":"]"}]}]', [1, 'a,]', true, null, { b: [1, { c: ']' }] }]],
    ['[ "\\"]\\\\" , 2 ]', ['"]\\', 2]],
  ])('reads %s', async (text, expected) => {
    expect(await parseAll(text)).toEqual(expected);
  });

  it.each([
    ['', 'end'],
    ['{"a":1}', 'expected a JSON array'],
    ['[1,2', 'end'],
    ['[1,,2]', 'missing element'],
    ['[1,]', 'missing element'],
    ['[,]', 'missing element'],
    ['[1] x', 'after the JSON array'],
    ['[{"a":}]', 'not valid JSON'],
    ['[{"a":1]', 'end'],
  ])('refuses %j', async (text, message) => {
    await expect(parseAll(text)).rejects.toThrow(SyntaxError);
    await expect(parseAll(text)).rejects.toThrow(message);
  });

  it('refuses invalid UTF-8', async () => {
    const bytes = Uint8Array.from([0x5b, 0x22, 0xff, 0x22, 0x5d]);
    await expect(collect(parseJsonArrayStream(chunksOf(bytes, [])))).rejects.toThrow(SyntaxError);
  });

  it('yields each element as soon as it is complete', () => {
    const s = new JsonArraySplitter();
    expect(s.push('[{"a":1},{"b"')).toEqual([{ a: 1 }]);
    expect(s.push(':2}')).toEqual([]);
    expect(s.push(']')).toEqual([{ b: 2 }]);
    expect(() => s.end()).not.toThrow();
  });
});
