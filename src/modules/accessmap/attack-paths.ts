/**
 * Attack paths over the access graph (docs/accessmap.md "Attack paths"). Principals are agents,
 * sessions and identities; one principal can act as another through three kinds of link:
 *
 * - `runs`: an agent acts through each of its sessions (a session's `parent_id`);
 * - `credential`: a principal that can read a `credential` resource acts as the identity it
 *   authenticates (the resource's `parent_id`);
 * - `writes`: a principal that can write (`rw`) a `config` or `code` resource controls every other
 *   principal that reads it (configuration is obeyed, code is executed).
 *
 * An access edge counts whether it is permitted, observed or both; each hop says which. Searches
 * are breadth-first, so every returned path is a shortest one; they are bounded by `maxDepth`
 * principal hops, by `maxNodes` visited principals, by a work `budget` of access edges examined,
 * and the answer by `limit` paths. In a dense estate an exact answer reads nearly the whole graph,
 * so the budget stops the reads themselves (the database's `limit`), level by level: what a cut
 * search returns is the nearest part of the answer, every path real and shortest, and the answer
 * says it is incomplete (`complete: false`, totals as lower bounds), never a silent partial one.
 */
export * from './search-bounds.js';
export { escalation, type EscalationResult, type Total } from './escalation.js';
export { reachability, type ReachItem, type ReachabilityResult } from './reachability.js';
export { exfil, type ExfilItem, type ExfilResult } from './exfil.js';
