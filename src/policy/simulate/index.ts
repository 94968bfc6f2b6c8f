/** The entrance of policy/simulate/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { chooseOrder, impactAt, type LossContext, lossAgainst } from './order.ts';
export { type LayerNames, SequenceDriver, type StateValues, timelines } from './sequence.ts';
export {
  type ChangeAction,
  type InventoryObject,
  type ObjectOutcome,
  type PolicyChange,
  Simulation,
  type SimulationResult,
  type Unpredictable,
} from './simulate.ts';
export { touchIndex } from './touch.ts';
