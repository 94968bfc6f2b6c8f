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
        : 'Read the error, fix the upstream (its URI, credentials, vhost) or the policy, then let the link reconnect.';
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

function missingStep(l: Omit<LinkRow, 'next'>): string {
  const reason = l.reason ?? '';
  if (/plugin is not enabled/.test(reason))
    return `Enable ${l.kind === 'shovel' ? 'rabbitmq_shovel and rabbitmq_shovel_management' : 'rabbitmq_federation and rabbitmq_federation_management'} on every node.`;
  if (/^the upstream set /.test(reason) && l.policy)
    return `Create the upstream set in vhost ${quoted(l.vhost)}, or change policy ${quoted(l.policy)} to name one that exists.`;
  if (/^the upstream /.test(reason) && l.policy)
    return `Create the upstream ${quoted(l.upstream ?? '')} in vhost ${quoted(l.vhost)}, or change policy ${quoted(l.policy)} to name one that exists.`;
  if (l.kind === 'shovel')
    return `Read the logs of every node for shovel ${quoted(l.object)}; once the cause is fixed, re-create its parameter or restart it with rabbitmqctl restart_shovel.`;
  const policy = quoted(l.policy ?? '');
  return l.kind === 'exchange'
    ? `Re-apply policy ${policy}: after a node restart the fix its users report is to delete and re-create it; through the bot that is a change request (\`preview delete ${policy}\` shows what stops meanwhile), approved like any other.`
    : `Check the upstream, then policy ${policy} for a rival of equal priority, then the logs of the queue leader's node; re-creating policy ${policy} recreates the link.`;
}
