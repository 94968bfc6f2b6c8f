import { maskUris } from '../../core/index.ts';
import { componentWords, stepLinksWords } from '../../plan/index.ts';
import type { PolicyFields } from '../../preview/index.ts';
import { jsonText, namesOrCount, showInvisible } from '../../text/index.ts';
import type { ChangeRequest } from '../../workflow/index.ts';
import {
  type ChangeSet,
  isParameterSetStep,
  recreatedPolicy,
  type StepState,
  stepAction,
  stepComponent,
  stepStates,
} from '../../workflow/index.ts';
import { code, prose, truncate } from '../escape.ts';
import type { AttachedFile } from '../slackCalls.ts';
import { type Block, context, listSection, section, setsWords } from './message.ts';

/**
 * A change set's request message, pure: after the loss (the end state's, `requestMessage` puts it
 * first), the way's, then the changes in the order they are written, at most SHOWN of them and as
 * many as fit one section (a set of 100 at the name limit stays within Slack's limits:
 * test/unit/slack-views-set.test.ts); the whole list is the attached file.
 */

export const SHOWN = 15;

/** Most characters the vhosts a set touches take in a message's header before they are counted instead. */
const VHOST_NAMES_MAX = 400;

/**
 * What a set is, in words: `import of 7 policy changes from `f.json`` (a set's revert: `revert of
 * …`; a set that writes parameters too: `import of 9 changes …`).
 */
export function setWords(r: Pick<ChangeRequest, 'action'> & { set: ChangeSet }, render = code): string {
  const recreated = recreatedPolicy(r.set);
  if (recreated)
    return `re-create of policy ${render(truncate(recreated.name, 200))} (deleted, then created again as it is)`;
  const n = r.set.steps.length;
  const noun = r.set.steps.some(isParameterSetStep) ? 'change' : 'policy change';
  return `${r.action === 'revert' ? 'revert' : 'import'} of ${n} ${noun}${n === 1 ? '' : 's'} from ${render(truncate(r.set.source, 200))}`;
}

/**
 * The vhosts a set touches, as a header names them: every one, or how many when their names
 * would not fit (`50 vhosts`: each is in the attached file).
 */
export function vhostsWords(vhosts: readonly string[], render = code): string {
  return namesOrCount(vhosts, (v) => render(truncate(v, 100)), 'vhost', {
    max: VHOST_NAMES_MAX,
    counted: ' (each in the attached file)',
  });
}

function stepLine(s: ChangeSet['steps'][number], i: number, state?: string): string {
  const links = linksOf(s, (n) => code(truncate(n, 60)), 3);
  return `${i + 1}. ${prose(stepAction(s))} ${componentWords(stepComponent(s))} ${code(truncate(s.name, 100))} in ${code(truncate(s.vhost, 60))}${links.map((l) => ` · ${l}`).join('')}${state ? ` · ${state}` : ''}`;
}

/** What a stored step does to the links, in words (its counts: the lists keep at most 100). */
const linksOf = (s: ChangeSet['steps'][number], show: (n: string) => string, shown: number) =>
  s.links ? stepLinksWords(s.links, show, shown, { start: s.links.startCount, stop: s.links.stopCount }) : [];

/** A policy (or a parameter's value, masked already) as the broker holds it, on one line. */
function holdsWords(s: ChangeSet['steps'][number], p: unknown): string {
  if (isParameterSetStep(s))
    return p === null || p === undefined
      ? `no ${componentWords(s.component)}`
      : code(truncate(jsonText(maskUris(p)), 200));
  if (p === null || p === undefined || typeof p !== 'object') return 'no policy';
  const f = p as PolicyFields;
  return `pattern ${code(truncate(f.pattern, 80))}, priority ${code(String(f.priority))}, ${setsWords(f.definition, { keys: 3, key: 40, value: 40 })}`;
}

const STATE_WORDS: Readonly<Record<StepState, string>> = {
  written: '_written_',
  undone: '_undone_',
  'as-planned': '_as planned (not written)_',
  left: ':warning: _left as changed outside this request (see above)_',
  unknown: ':grey_question: _not known (see above)_',
};

/**
 * A step whose policy is not as the set would have it (left by the rollback as someone else
 * changed it, or not known), in full: shown above the list, whatever place it has in it.
 */
function attentionWords(s: ChangeSet['steps'][number], state: StepState, holds: unknown): string {
  return state === 'left'
    ? `:warning: *left as changed outside this request*, not undone: the broker holds ${holdsWords(s, holds)}`
    : ':grey_question: *not known*: the broker did not answer when asked; asked again until it does, and the set does not end before';
}

/**
 * A re-created policy's lead, before its loss: what the loss below is (the objects between the two
 * writes, as `preview delete` shows them) and that the end state is now. None for any other set.
 */
export function recreateLead(set: ChangeSet): Block[] {
  const p = recreatedPolicy(set);
  if (!p) return [];
  const name = code(truncate(p.name, 200));
  return [
    section(
      `*Between the two writes*, policy ${name} deleted and not yet created again, every object it governs falls back as below (what \`preview delete\` shows), and its federation links stop; the create starts them again. *The end state is now:* policy ${name} exactly as it is, every object governed as it is. The broker restarts the links only this way: the same policy put again restarts nothing.`,
    ),
  ];
}

export function setBlocks(r: ChangeRequest & { set: ChangeSet }): Block[] {
  const steps = r.set.steps;
  const states = r.setProgress ? stepStates(r.setProgress) : undefined;
  const holds = new Map((r.setProgress?.left ?? []).map((l) => [l.step, l.holds]));
  const attention = steps.flatMap((s, i) => {
    const state = states?.[i];
    return state === 'left' || state === 'unknown'
      ? [stepLine(s, i, attentionWords(s, state, holds.get(i) ?? null))]
      : [];
  });
  const way = r.set.transitional;
  const wayLine =
    way && (way.messagesLost || way.messagesDeadLettered || way.queuesDeleted)
      ? `*On the way* (no order avoids it): ${way.messagesLost} messages lost, ${way.messagesDeadLettered} dead-lettered, ${way.queuesDeleted} queues deleted: counted in the loss above.`
      : '*On the way*: the order of writing removes nothing the end state does not.';
  return [
    section(wayLine),
    ...(attention.length
      ? [listSection('*Not as the set would have them:*', attention, { maxItems: 10 })]
      : []),
    listSection(
      `*${steps.length} change${steps.length === 1 ? '' : 's'} from* ${code(truncate(r.set.source, 200))}, *in the order of writing* (each re-checked before it is written; one that fails rolls back those written):`,
      steps.map((s, i) => {
        const state = states?.[i];
        return stepLine(s, i, state && STATE_WORDS[state]);
      }),
      { maxItems: SHOWN },
    ),
    context(
      [
        steps.length > 1 ? 'Every change, in order, is in the attached file.' : '',
        r.set.unchanged
          ? `${r.set.unchanged} polic${r.set.unchanged === 1 ? 'y' : 'ies'} of the file unchanged.`
          : '',
      ]
        .filter(Boolean)
        .join(' ') || 'The only change of the file.',
    ),
  ];
}

/** Every change of the set, in order, as a text file: the whole plan, reachable from the message. */
export function setFile(r: ChangeRequest & { set: ChangeSet }): AttachedFile {
  // A parameter's URIs masked: the file is posted in the channel.
  const shown = (s: ChangeSet['steps'][number], v: unknown) =>
    v === null ? '(none)' : jsonText(isParameterSetStep(s) ? maskUris(v) : v);
  const lines = r.set.steps.map(
    (s, i) =>
      `${i + 1}. ${stepAction(s)} ${componentWords(stepComponent(s))} ${showInvisible(s.name)} in ${showInvisible(s.vhost)}\n` +
      linksOf(s, showInvisible, 100)
        .map((l) => `   ${l}\n`)
        .join('') +
      `   before: ${shown(s, s.before)}\n   after:  ${shown(s, s.after)}`,
  );
  return {
    filename: `set-${r.id}.txt`,
    title: `Change set ${r.id}: every change, in the order of writing`,
    content: `${lines.join('\n')}\n`,
  };
}
