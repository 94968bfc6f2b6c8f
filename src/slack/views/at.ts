import {
  type AroundOf,
  type AtKeys,
  aroundDiff,
  aroundHeading,
  aroundNone,
  aroundWords,
  asWhichSays,
  atHead,
  betweenWords,
  type EdgeAnswer,
  KIND_NOT_ASKED,
  type PoliciesAtResult,
  unknownWords,
  type WhichAtResult,
} from '../../commands/at/index.ts';
import { kindWords } from '../../commands/index.ts';
import { code, truncate, valueCode } from '../escape.ts';
import {
  type Block,
  context,
  finish,
  type MessageWithFile,
  type SlackMessage,
  section,
  slackDate,
} from './message.ts';
import { policiesView } from './policies.ts';
import { whichView } from './which.ts';

/**
 * `which --at` and `policies --at` in Slack: the instant (Slack's date formatting: each reader's
 * own time zone) and that the answer is recomputed from the trail, the answer as `which` and
 * `policies` show it (or why it is unknown), then the changes around the instant.
 */

const name = (s: string) => code(truncate(s, 200));
const AROUND_SHOWN = 8;

function aroundBlocks(r: AtKeys, of: AroundOf): Block[] {
  if (r.around.length === 0) return [context(aroundNone(of))];
  const lines = r.around.slice(0, AROUND_SHOWN).map((e) => {
    const diff = aroundDiff(
      e,
      (s) => code(truncate(s, 200)),
      (v) => valueCode(v, 120),
    );
    return `• ${slackDate(e.at)} ${aroundWords(e, name)}${betweenWords(e, slackDate)}${diff ? `: ${diff}` : ''}`;
  });
  const more =
    r.around.length > AROUND_SHOWN
      ? `\n…and ${r.around.length - AROUND_SHOWN} more (--json lists them all)`
      : '';
  return [section(`*${aroundHeading(of)}:*\n${lines.join('\n')}${more}`)];
}

function edgeWords(e: EdgeAnswer): string {
  if (!e.known) return `${slackDate(e.at)}: unknown`;
  const inForce = e.candidates
    ? `undefined between ${e.candidates.map(name).join(', ')}`
    : e.inForce
      ? name(e.inForce)
      : 'no policy';
  const values = Object.entries(e.effective).map(([k, v]) => `${code(k)}=${valueCode(v, 120)}`);
  return `${slackDate(e.at)}: ${inForce}${e.operatorPolicy ? `, operator policy ${name(e.operatorPolicy)}` : ''}${values.length ? ` (${values.join(', ')})` : ''}`;
}

export function whichAtView(r: WhichAtResult): SlackMessage {
  const head = atHead(r, slackDate);
  const what = `the ${kindWords(r.object.kind)} ${name(r.object.name)}`;
  if (!r.known) {
    const edges = r.edges
      ? `\nAt the gap's start, ${edgeWords(r.edges.from)}; at its end, ${edgeWords(r.edges.to)}.`
      : '';
    const blocks = [
      section(`:grey_question: ${head}\n${unknownWords(r, slackDate, what)}${edges}`),
      ...aroundBlocks(r, 'object'),
    ];
    return finish(blocks, `${r.at}: unknown`);
  }
  const inner = whichView(asWhichSays(r));
  const kind =
    r.kindFrom === 'flag'
      ? ' (kind as --kind says)'
      : r.kindFrom === 'now'
        ? ' (its kind now)'
        : r.kindFrom === 'not-asked'
          ? `\n${KIND_NOT_ASKED}`
          : '';
  return finish(
    [context(`:rewind: ${head}${kind}`), ...inner.blocks, ...aroundBlocks(r, 'object')],
    `${r.at}: ${inner.text}`,
  );
}

export function policiesAtView(r: PoliciesAtResult): MessageWithFile {
  const head = atHead(r, slackDate);
  if (!r.known)
    return finish(
      [
        section(
          `:grey_question: ${head}\n${unknownWords(r, slackDate, `the policies of vhost ${name(r.vhost)}`)}`,
        ),
        ...aroundBlocks(r, 'vhost'),
      ],
      `${r.at}: unknown`,
    );
  const inner = policiesView(r);
  return {
    ...finish(
      [context(`:rewind: ${head}`), ...inner.blocks, ...aroundBlocks(r, 'vhost')],
      `${r.at}: ${inner.text}`,
    ),
    ...(inner.file ? { file: inner.file } : {}),
  };
}
