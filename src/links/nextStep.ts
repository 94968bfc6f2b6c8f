import { quoted } from '../text/index.ts';
import type { LinkRow } from './types.ts';

/**
 * The runbook's next step for a link that does not run, in one line. The bot never restarts,
 * re-creates or rewrites a link itself: a step that writes is said as the command that files it
 * as a change request (with its preview), or as the operator's own command.
 */
export function nextStep(l: Omit<LinkRow, 'next'>): string | null {
  switch (l.state) {
    case 'running':
    case 'starting':
      return null;
    case 'stuck':
      return `Check reachability, credentials and TLS from the node running it${l.node ? ` on node ${quoted(l.node)}` : ''}; a refused login is logged there.`;
    case 'stopped':
      return l.kind === 'shovel'
        ? `Read the reason, fix the source or destination, then restart it with rabbitmqctl restart_shovel ${quoted(l.object)}.`
        : `Read the error, fix the upstream (URI, credentials, vhost) or the policy${l.policy ? `; if the link does not reconnect, ${recreateWords(l.policy, l.vhost)}` : ', then let the link reconnect'}.`;
    case 'unexpected':
      return l.kind === 'shovel'
        ? 'No shovel parameter asks for it: a static shovel (advanced.config), or a parameter deleted while it ran.'
        : 'No policy in force asks for it: check whether another policy now governs the object (equal priorities are picked at random).';
    case 'unknown':
      return 'Give the bot an identity that may list links (monitoring or administrator tag), or enable the plugin’s management part.';
    case 'missing':
      return missingStep(l);
  }
}

/** What a link's state and reason say of it, as a links record keeps them too (src/audit/ `LinkEvent`). */
export interface LinkFacts {
  readonly kind: LinkRow['kind'];
  readonly vhost: string;
  readonly state: string;
  readonly policy: string | null;
  readonly reason: string | null;
}

/** Why a missing link cannot start, as its reason says (src/links/classify.ts): a fix other than the policy's. */
function missingCause(l: LinkFacts): 'plugin' | 'upstream-set' | 'upstream' | null {
  const reason = l.reason ?? '';
  if (/plugin is not enabled/.test(reason)) return 'plugin';
  if (/^the upstream set /.test(reason)) return 'upstream-set';
  if (/^the upstream /.test(reason)) return 'upstream';
  return null;
}

/**
 * The policy whose re-creation is the runbook's step for this link: a federation link stopped, or
 * missing for no cause that another fix names (an upstream that does not exist, the plugin). The
 * broker restarts an exchange's or queue's links when its policy is deleted and created again, and
 * not when the same policy is put again (docs/broker-facts.md). Null: not this link's step.
 */
export function recreatePolicyOf(l: LinkFacts): string | null {
  if (l.kind === 'shovel' || !l.policy) return null;
  if (l.state === 'stopped') return l.policy;
  return l.state === 'missing' && missingCause(l) === null ? l.policy : null;
}

/** The command that files a policy's re-creation as a change request, as typed in Slack. */
export function recreateCommand(policy: string, vhost: string): string {
  return `recreate ${quoted(policy)}${vhost === '/' ? '' : ` --vhost ${quoted(vhost)}`}`;
}

/** The step that re-creates the policy, in words (the one sentence the runbook's steps share). */
function recreateWords(policy: string, vhost: string): string {
  return `re-create policy ${quoted(policy)} (\`${recreateCommand(policy, vhost)}\`, a change request like any other: put again unchanged, it restarts nothing)`;
}

function missingStep(l: Omit<LinkRow, 'next'>): string {
  const cause = missingCause(l);
  if (cause === 'plugin')
    return `Enable ${l.kind === 'shovel' ? 'rabbitmq_shovel and rabbitmq_shovel_management' : 'rabbitmq_federation and rabbitmq_federation_management'} on every node.`;
  if (cause === 'upstream-set' && l.policy)
    return `Create the upstream set in vhost ${quoted(l.vhost)}, or change policy ${quoted(l.policy)} to name one that exists.`;
  if (cause === 'upstream' && l.policy)
    return `Create the upstream ${quoted(l.upstream ?? '')} in vhost ${quoted(l.vhost)}, or change policy ${quoted(l.policy)} to name one that exists.`;
  if (l.kind === 'shovel')
    return `Read the logs of every node for shovel ${quoted(l.object)}; once the cause is fixed, re-create its parameter or restart it with rabbitmqctl restart_shovel.`;
  const policy = l.policy ?? '';
  const step = recreateWords(policy, l.vhost);
  return l.kind === 'exchange'
    ? `${step.charAt(0).toUpperCase()}${step.slice(1)}: after a node restart, the fix its users report.`
    : `Check the upstream, then policy ${quoted(policy)} for a rival of equal priority, then the logs of the queue leader's node; then ${step}.`;
}
