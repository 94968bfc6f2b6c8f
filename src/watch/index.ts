/** The entrance of watch/: what the other folders of src/ use of it (inside, modules import each other directly). */

export { type LinksNotifier, type LinksWatchers, type NodeRunning, watchLinks } from './links.ts';
export { LinksStore } from './linksStore.ts';
export type { OutsideNotifier } from './outside.ts';
export { ownWriteAnnouncer } from './store.ts';
export { type Watchers, watchOutside } from './watchers.ts';
