/** The entrance of commands/links/: what the other folders of src/ use of it (inside, modules import each other directly). */
export {
  FAIL_ON,
  LINKS_FAIL_EXIT,
  type LinksBroker,
  type LinksFailOn,
  type LinksInput,
  type LinksOptions,
  type LinksResult,
  type LinksWatchRead,
  links,
  linksExitCode,
  parseLinks,
  startingWords,
  vhostsOf,
} from './links.ts';
