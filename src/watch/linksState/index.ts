/**
 * The entrance to the links watch's recorded state alone (linksStore.ts), for a reader that runs no
 * watch: the terminal's `links` loads this, not the watchers and their AMQP follower.
 */
export { LinksStore } from '../linksStore.ts';
