// Summary of a V8 .cpuprofile (node --cpu-prof): self time, self time per file, inclusive time (each function once per sample).
// usage: node bench/probes/cpuprofile-summary.mjs <file.cpuprofile> [top] [startFraction endFraction]
import { readFileSync } from 'node:fs';

const [file, topArg, a, b] = process.argv.slice(2);
const top = Number(topArg ?? 30);
const p = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const short = (url) => (url || '').replace(/^.*\/(dist|node_modules)\//, '$1/').replace('file://', '');
const label = (n) => `${n.callFrame.functionName || '(anon)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;
const self = new Map();
const incl = new Map();
const files = new Map();
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
const t0 = p.startTime;
const t1 = p.endTime;
const lo = a ? t0 + (t1 - t0) * Number(a) : t0;
const hi = b ? t0 + (t1 - t0) * Number(b) : t1;
let t = p.startTime;
let total = 0;
let idle = 0;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i] ?? 0;
  t += dt;
  if (t < lo || t > hi) continue;
  let id = p.samples[i];
  const n = byId.get(id);
  if (n.callFrame.functionName === '(idle)') {
    idle += dt;
    continue;
  }
  total += dt;
  add(self, label(n), dt);
  add(files, short(n.callFrame.url || '(native)').replace(/^(node_modules\/[^/]+).*/, '$1'), dt);
  const seen = new Set();
  while (id !== undefined) {
    const l = label(byId.get(id));
    if (!seen.has(l)) {
      seen.add(l);
      add(incl, l, dt);
    }
    id = parent.get(id);
  }
}
const ms = (x) => (x / 1000).toFixed(0).padStart(7);
const pc = (x) => ((100 * x) / total).toFixed(1).padStart(5) + '%';
const show = (m, n) => [...m].sort((x, y) => y[1] - x[1]).slice(0, n).forEach(([k, v]) => console.log(ms(v), pc(v), k));
console.log(`busy ${ms(total)} ms (idle ${ms(idle)} ms)`);
console.log('--- self');
show(self, top);
console.log('--- by file (self)');
show(files, 20);
console.log('--- inclusive');
show(incl, top * 2);
