import type { Parameter, ParameterComponent, Policy, PolicyLayer } from '../policy/index.ts';
import type { PreviewBroker } from '../preview/index.ts';
import type { Permission, WhoAmI } from '../rabbit/index.ts';

/**
 * What the workflow needs of one environment's management API. ManagementClient satisfies it.
 * The apply worker gets clients built for a background job (long timeouts, no retries inside the
 * client for writes: the job retries); `Workflow.file` gets the ones that answer Slack.
 */
export interface WorkflowBroker extends PreviewBroker {
  whoami(): Promise<WhoAmI>;
  listVhosts(): Promise<string[]>;
  permissions(vhost: string, user: string): Promise<Permission | null>;
  getPolicy(layer: PolicyLayer, vhost: string, name: string): Promise<Policy | null>;
  putPolicy(layer: PolicyLayer, policy: Policy): Promise<'created' | 'updated'>;
  deletePolicy(layer: PolicyLayer, vhost: string, name: string): Promise<void>;
  parameters(
    component: ParameterComponent,
    vhost: string,
  ): Promise<readonly { readonly name: string; readonly value: unknown }[]>;
  getParameter(component: ParameterComponent, vhost: string, name: string): Promise<Parameter | null>;
  putParameter(parameter: Parameter): Promise<void>;
  deleteParameter(component: ParameterComponent, vhost: string, name: string): Promise<void>;
}
