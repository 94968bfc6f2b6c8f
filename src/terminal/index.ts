/** The entrance of terminal/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { planText } from './plan.ts';
