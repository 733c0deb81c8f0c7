/**
 * `CatalogSync`'s `viewRebuild: true`: the {@link ViewRebuild} of its mirror's latest view (construct id
 * `ViewRebuild`), its alarm and graphs on the sync's dashboard, and a stack output naming the state machine.
 */
import { CfnOutput } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { CatalogSyncPropsError } from '../catalog-sync-props.js';
import type { ConsumableSync } from './consumable-sync.js';
import { ViewRebuild } from './view-rebuild.js';

export type { ViewRebuild } from './view-rebuild.js';

/** Adds the view rebuild to `sync`; refuses it without the view (`view: true`). */
export function addViewRebuild(
  sync: ConsumableSync,
  props: { readonly view?: boolean; readonly alarmTopic?: sns.ITopic },
  outputPrefix: string | undefined,
): ViewRebuild {
  if (props.view !== true)
    throw new CatalogSyncPropsError(
      `${sync.node.path}: viewRebuild needs view: true (the rebuild writes the latest view, which upkeep then keeps)`,
    );
  const rebuild = new ViewRebuild(sync, 'ViewRebuild', {
    sync,
    ...(props.alarmTopic ? { alarmTopic: props.alarmTopic } : {}),
  });
  sync.dashboard?.addViewRebuild(rebuild.stateMachine, rebuild.failedAlarm, rebuild.serviceName);
  // Named as the sync's other outputs (`{outputPrefix}…`, `ViewRebuildStateMachineArn` for the app's first sync).
  if (outputPrefix !== undefined)
    new CfnOutput(sync, 'ViewRebuildStateMachineArnOutput', {
      value: rebuild.stateMachine.stateMachineArn,
      description:
        'Rebuild the latest view: catalog-sync view --rebuild --state-machine <this ARN> (or the console, input {})',
    }).overrideLogicalId(`${outputPrefix}ViewRebuildStateMachineArn`);
  return rebuild;
}
