#!/usr/bin/env node
// The package as an operator installs it: `npm pack` of this checkout (dist/ must be built: `npm run
// build`), installed into an empty directory, then checked and, with --bench, measured:
//   1. the tarball holds what runtime needs (bin, dist/src, dist/bench/lib, dist/web, proto, the
//      step-up page, reference bench results) and no tests or sources;
//   2. `svc version` runs from the installed package;
//   3. --bench: `svc bench http` from the installed package against a scratch server, then against a
//      `svc serve` of the installed package started separately, with the key of a `bench-` tenant.
//      Known gap (docs/sizing.md): `svc bench --server` refuses that key today (the key holds no
//      grant of its own on a tenant its user is not a member of, and cannot read the tenant's name),
//      so this last step fails until the bench-tenant check is fixed.
// Usage: node scripts/pack-install-check.mjs [--dir DIR] [--bench] [--rate N] [--duration 5s]
//   --dir DIR   install into DIR (reused when it already holds an install: only svc is replaced)
// A full install fetches ~170 packages (npm cache first, then the registry) and compiles
// better-sqlite3 from source when no prebuilt binary can be downloaded: minutes, so this is a CI /
// release step, not a unit test (test/project-files.test.ts checks the file list with --dry-run).
// Prints one JSON document with the checks and the bench results; exit 1 when a check fails.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MUST_HAVE, MUST_NOT } from './package-files.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    dir: { type: 'string' },
    bench: { type: 'boolean', default: false },
    rate: { type: 'string', default: '2000' },
    duration: { type: 'string', default: '5s' },
  },
});
const log = (m) => process.stderr.write(`[pack-install] ${m}\n`);
const checks = [];
const check = (name, ok, detail = '') => {
  checks.push({ name, ok, ...(detail ? { detail } : {}) });
  log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
};

if (!existsSync(join(root, 'dist', 'src', 'cli', 'main.js'))) {
  log('dist/ is not built: run `npm run build` first');
  process.exit(2);
}
const packDir = mkdtempSync(join(tmpdir(), 'svc-pack-'));
log('npm pack …');
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packDir], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
)[0];
const tarball = join(packDir, packed.filename);
check('tarball size', packed.size < 20 * 1024 * 1024, `${(packed.size / 1024 / 1024).toFixed(1)} MiB packed, ${packed.entryCount} files`);

const dir = args.dir ? resolve(args.dir) : mkdtempSync(join(tmpdir(), 'svc-install-'));
mkdirSync(dir, { recursive: true });
if (!existsSync(join(dir, 'package.json')))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'svc-install-check', version: '0.0.0', private: true }, null, 2));
// node-gyp's headers from this Node when better-sqlite3 must be compiled (no download from nodejs.org here).
const nodedir = resolve(dirname(process.execPath), '..');
const env = { ...process.env, ...(existsSync(join(nodedir, 'include', 'node', 'node.h')) ? { npm_config_nodedir: nodedir } : {}) };
log(`npm install --prefer-offline ${tarball} in ${dir} …`);
const t0 = Date.now();
execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], {
  cwd: dir,
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
const installSeconds = (Date.now() - t0) / 1000;
const pkg = join(dir, 'node_modules', 'svc');
for (const p of MUST_HAVE) check(`installed package has ${p}`, existsSync(join(pkg, p)));
for (const p of MUST_NOT) check(`installed package has no ${p}`, !existsSync(join(pkg, p)));
const svcBin = join(dir, 'node_modules', '.bin', 'svc');
const version = execFileSync(svcBin, ['version'], { encoding: 'utf8' });
check('svc version runs from the installed package', /commit:/.test(version));

const bench = {};
if (args.bench) {
  const benchArgs = ['--rate', args.rate, '--duration', args.duration, '-o', 'json'];
  log('svc bench http against a scratch server …');
  bench.scratch = JSON.parse(
    execFileSync(svcBin, ['bench', 'http', ...benchArgs], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  check(
    'svc bench http (scratch) answered',
    bench.scratch.load.ok > 0,
    `${bench.scratch.load.achievedRate.toFixed(0)} req/s, p99 ${bench.scratch.load.latencyMs.p99} ms`,
  );
  bench.server = await againstServe(dir, svcBin, benchArgs);
  check(
    'svc bench http (--server, bench- tenant) answered',
    bench.server.load.ok > 0,
    `${bench.server.load.achievedRate.toFixed(0)} req/s, p99 ${bench.server.load.latencyMs.p99} ms`,
  );
}
const summary = { tarball: packed.filename, size: packed.size, files: packed.entryCount, installDir: dir, installSeconds, checks, bench };
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.exit(checks.every((c) => c.ok) ? 0 : 1);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

/**
 * `svc serve --seed-demo` of the installed package, a `bench-install` tenant with an admin key, and `svc bench http --server` with that
 * key.
 */
async function againstServe(dir, svcBin, benchArgs) {
  const data = mkdtempSync(join(tmpdir(), 'svc-install-data-'));
  const [port, grpc] = [await freePort(), await freePort()];
  log(`svc serve (installed package) on 127.0.0.1:${port} …`);
  const child = spawn(svcBin, ['serve', '--data-dir', data, '--listen', `127.0.0.1:${port}`, '--grpc-listen', `127.0.0.1:${grpc}`], {
    cwd: dir,
    env: { ...process.env, SERVICE_SEED_DEMO: 'true' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    const { request, Agent } = await import(join(dir, 'node_modules', 'undici', 'index.js'));
    const url = `https://127.0.0.1:${port}`;
    let dispatcher;
    for (let i = 0; ; i++) {
      try {
        dispatcher ??= new Agent({ connect: { ca: readFileSync(join(data, 'tls', 'cert.pem')), servername: 'localhost' } });
        const r = await request(`${url}/healthz`, { dispatcher });
        await r.body.text();
        if (r.statusCode === 200) break;
      } catch {
        if (i > 120) throw new Error('svc serve did not answer /healthz within 60 s');
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const call = async (method, path, body, token) => {
      const r = await request(`${url}${path}`, {
        method,
        dispatcher,
        body: body === undefined ? undefined : JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      const text = await r.body.text();
      if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 200)}`);
      return JSON.parse(text);
    };
    const { DEMO_ADMIN } = await import(join(dir, 'node_modules', 'svc', 'dist', 'src', 'core', 'setup', 'startup.js'));
    const session = (await call('POST', '/v1/auth/login', { email: DEMO_ADMIN.email, password: DEMO_ADMIN.password })).token;
    const tenant = (await call('POST', '/v1/system/orgs', { name: 'bench-install' }, session)).id;
    const key = (await call('POST', '/v1/tokens', { name: 'bench', role: 'admin', tenant }, session)).token;
    await dispatcher.close();
    log('svc bench http --server …');
    return JSON.parse(
      execFileSync(svcBin, ['bench', 'http', '--server', url, '--token', key, '--ca-cert', join(data, 'tls', 'cert.pem'), ...benchArgs], {
        cwd: dir,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}
