/** The entrance of slack/requests/: what the other folders of src/ use of it (inside, modules import each other directly). */
export { parseThreadLink } from './command.ts';
