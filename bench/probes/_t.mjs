import { openStore } from '../../dist/src/store/store.js';
import { mkdtempSync } from 'node:fs';
const dir = mkdtempSync('/tmp/sch-');
const s = await openStore({ backend: 'sqlite', dataDir: dir });
try { await s.migrate(); } catch (e) { console.log(e); }
await s.close();
