/**
 * Issue 30 item 19: the project stands alone. Nothing under src/, test/, scripts/ or bench/ may
 * refer to the workspace's shared folder next to the repository (a user's clone has none), and the
 * OCSF tests read the OCSF 1.8.0 definitions vendored in test/vectors, with their licence beside them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT } from './helpers/server.js';
import { OcsfSchema, ocsfSchemaDir } from './encoders/ocsf-resolver.js';

// Built from parts, so this file does not mention what it looks for.
const SHARED = ['..', 'shared'].join('/');
const ABSOLUTE = ['', 'work', 'shared'].join('/');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? files(full) : [full];
  });
}

describe('the project stands alone', () => {
  it(`no file under src/, test/, scripts/ or bench/ mentions ${SHARED}`, () => {
    const offenders: string[] = [];
    for (const top of ['src', 'test', 'scripts', 'bench']) {
      for (const file of files(join(REPO_ROOT, top))) {
        const text = readFileSync(file);
        if (text.includes(SHARED) || text.includes(ABSOLUTE)) offenders.push(relative(REPO_ROOT, file));
      }
    }
    assert.deepEqual(offenders, []);
  });

  it('the OCSF tests read the definitions vendored in test/vectors, with the licence and notice', () => {
    const dir = join(REPO_ROOT, 'test', 'vectors', 'ocsf-schema-1.8.0');
    delete process.env['SVC_OCSF_SCHEMA_DIR'];
    assert.equal(ocsfSchemaDir(), dir);
    assert.match(readFileSync(join(dir, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    assert.match(readFileSync(join(dir, 'NOTICE'), 'utf8'), /Open Cybersecurity Schema Framework/);
    assert.ok(existsSync(join(dir, 'dictionary.json')));
    const schema = new OcsfSchema(dir);
    assert.equal(schema.classNameByUid(6003), 'api_activity');
  });
});
