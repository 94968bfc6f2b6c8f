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
} from '../commands/at/index.ts';
import { kindWords } from '../commands/index.ts';
import { jsonWritten, quoted, showInvisible, terminalText } from '../text/index.ts';
import { policiesText } from './policies.ts';
import { whichText } from './which.ts';

/**
 * `which --at` and `policies --at` as terminal text: the instant and that the answer is recomputed
 * from the trail, the answer as `which` and `policies` give it (or why it is unknown), then the
 * changes around the instant. Instants in UTC ISO.
 */

const utc = (iso: string) => iso;

function aroundLines(r: AtKeys, of: AroundOf): string[] {
  if (r.around.length === 0) return ['', aroundNone(of)];
  return [
    '',
    `${aroundHeading(of)}:`,
    ...r.around.flatMap((e) => {
      const diff = aroundDiff(e, quoted, jsonWritten, showInvisible);
      return [
        `  ${e.at}  ${aroundWords(e, quoted)}${betweenWords(e, utc)}`,
        ...(diff ? [`    ${diff}`] : []),
      ];
    }),
  ];
}

/** A command's answer, already terminal text, as lines of this one (its line breaks kept as breaks). */
const linesOf = (text: string) => text.trimEnd().split('\n');

function edgeWords(e: EdgeAnswer): string {
  if (!e.known) return `${e.at}: unknown`;
  const inForce = e.candidates ? `undefined between ${e.candidates.join(', ')}` : (e.inForce ?? 'no policy');
  const values = Object.entries(e.effective).map(([k, v]) => `${k}=${jsonWritten(v)}`);
  return `${e.at}: ${inForce}${e.operatorPolicy ? `, operator policy ${e.operatorPolicy}` : ''}${values.length ? `; ${values.join(', ')}` : ''}`;
}

function kindLine(r: WhichAtResult): string[] {
  if (r.kindFrom === 'flag') return [`(as a ${kindWords(r.object.kind)}, as --kind says)`];
  if (r.kindFrom === 'now') return [`(as a ${kindWords(r.object.kind)}, its kind now)`];
  if (r.kindFrom === 'not-asked') return [KIND_NOT_ASKED];
  return [];
}

export function whichAtText(r: WhichAtResult): string {
  const what = `${kindWords(r.object.kind)} ${quoted(r.object.name)}`;
  const lines = [atHead(r, utc), ...kindLine(r)];
  if (r.known) {
    lines.push(...linesOf(whichText(asWhichSays(r))));
  } else {
    lines.push(unknownWords(r, utc, `the ${what}`));
    if (r.edges)
      lines.push(
        `  At the gap's start, ${edgeWords(r.edges.from)}`,
        `  At its end, ${edgeWords(r.edges.to)}`,
      );
  }
  lines.push(...aroundLines(r, 'object'));
  return terminalText(lines);
}

export function policiesAtText(r: PoliciesAtResult): string {
  const lines = [atHead(r, utc)];
  if (r.known) lines.push(...linesOf(policiesText(r)));
  else lines.push(unknownWords(r, utc, `the policies of vhost ${quoted(r.vhost)}`));
  lines.push(...aroundLines(r, 'vhost'));
  return terminalText(lines);
}
