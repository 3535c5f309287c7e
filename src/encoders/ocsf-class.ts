/**
 * OCSF 1.8.0 class and activity selection from an action (spec: OCSF rules; DECISIONS.md
 * "Encoders": class 6003 by default, activity from the action verb).
 *
 *  - Process Activity (1007, category System 1): the verb launches something (`exec`, `execute`,
 *    `spawn`, `launch`: an agent running a tool or command) or a noun is `process`.
 *  - Datastore Activity (6005, category Application 6): a noun (action segment or target kind) is a
 *    data store: `datastore`, `database`, `table`, `bucket`, `dataset`, `vector_store`,
 *    `knowledge_base`.
 *  - API Activity (6003, category Application 6): everything else. create 1, read/export 2,
 *    update 3, delete 4, any other verb 99 (Other) with the verb as `activity_name`.
 */
import { actionNouns, actionVerb, type EgressEntry } from './egress-entry.js';

/** The OCSF classes we emit. */
export type OcsfClassUid = 6003 | 1007 | 6005;

/** Class, category and activity of one event; `type_uid = class_uid * 100 + activity_id`. */
export interface OcsfClassChoice {
  class_uid: OcsfClassUid;
  class_name: string;
  category_uid: 1 | 6;
  category_name: string;
  activity_id: number;
  activity_name: string;
  type_uid: number;
  type_name: string;
}

const LAUNCH_VERBS = new Set(['exec', 'execute', 'spawn', 'launch']);

/** Process Activity activity ids (events/system/process_activity.json). */
const PROCESS_ACTIVITY: Readonly<Record<string, [number, string]>> = {
  exec: [1, 'Launch'], execute: [1, 'Launch'], spawn: [1, 'Launch'], launch: [1, 'Launch'], start: [1, 'Launch'],
  terminate: [2, 'Terminate'], kill: [2, 'Terminate'], stop: [2, 'Terminate'], exit: [2, 'Terminate'],
  open: [3, 'Open'],
  inject: [4, 'Inject'],
  setuid: [5, 'Set User ID'],
};

/** Nouns that name a data store (Datastore Activity 6005). */
export const DATASTORE_NOUNS: ReadonlySet<string> = new Set([
  'datastore', 'database', 'table', 'bucket', 'dataset', 'vector_store', 'knowledge_base',
]);

/** Datastore Activity activity ids (events/application/datastore_activity.json). */
const DATASTORE_ACTIVITY: Readonly<Record<string, [number, string]>> = {
  read: [1, 'Read'], get: [1, 'Read'], fetch: [1, 'Read'],
  update: [2, 'Update'], modify: [2, 'Update'],
  connect: [3, 'Connect'],
  query: [4, 'Query'], search: [4, 'Query'],
  write: [5, 'Write'], put: [5, 'Write'], insert: [5, 'Write'], upsert: [5, 'Write'], ingest: [5, 'Write'],
  create: [6, 'Create'],
  delete: [7, 'Delete'], remove: [7, 'Delete'], drop: [7, 'Delete'],
  list: [8, 'List'],
  encrypt: [9, 'Encrypt'],
  decrypt: [10, 'Decrypt'],
};

/** API Activity activity ids, exactly the DECISIONS.md list. */
const API_ACTIVITY: Readonly<Record<string, [number, string]>> = {
  create: [1, 'Create'],
  read: [2, 'Read'], export: [2, 'Read'],
  update: [3, 'Update'],
  delete: [4, 'Delete'],
};

function choice(
  class_uid: OcsfClassUid, class_name: string, category_uid: 1 | 6, category_name: string,
  table: Readonly<Record<string, [number, string]>>, verb: string,
): OcsfClassChoice {
  const hit = Object.hasOwn(table, verb) ? table[verb] : undefined;
  // 99 Other: the source's own label goes in the sibling `activity_name` (OCSF dictionary, activity_id)
  const [activity_id, activity_name] = hit ?? [99, verb === '' ? 'Other' : verb];
  return {
    class_uid, class_name, category_uid, category_name, activity_id, activity_name,
    type_uid: class_uid * 100 + activity_id,
    type_name: `${class_name}: ${hit ? activity_name : 'Other'}`,
  };
}

/** Choose the OCSF class and activity of an entry (see the file header for the mapping). */
export function ocsfClassFor(entry: Pick<EgressEntry, 'name' | 'targetKind'>): OcsfClassChoice {
  const verb = actionVerb(entry.name);
  const nouns = actionNouns(entry);
  if (LAUNCH_VERBS.has(verb) || nouns.includes('process')) {
    return choice(1007, 'Process Activity', 1, 'System Activity', PROCESS_ACTIVITY, verb);
  }
  if (nouns.some((n) => DATASTORE_NOUNS.has(n))) {
    return choice(6005, 'Datastore Activity', 6, 'Application Activity', DATASTORE_ACTIVITY, verb);
  }
  return choice(6003, 'API Activity', 6, 'Application Activity', API_ACTIVITY, verb);
}
