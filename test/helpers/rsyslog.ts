/**
 * A throwaway Debian `rsyslogd` (rsyslog + rsyslog-gnutls 8.2302) on loopback for connector tests:
 * one daemon with an RFC 5425 TLS input (gtls, octet counting), a cleartext TCP input (octet
 * counting or LF, RFC 6587) and a UDP input (RFC 5426), each record written twice — verbatim
 * (`%rawmsg%`, one per line: what `svc audit verify --file` reads) and as JSON of what rsyslog's
 * RFC 5424 parser made of it. The certificates come from a throwaway CA (openssl); a second CA
 * signs nothing rsyslog serves, for "wrong certificate" tests. `stop()`/`start()` keep ports and
 * files, so a receiver can go down and come back on the same address.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

// rsyslogd listens on loopback: the egress guard allows loopback only under the development flag.
process.env['SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS'] = 'true';

const which = (bin: string): string | null =>
  ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].map((d) => join(d, bin)).find((p) => existsSync(p)) ?? null;
export const RSYSLOGD = which('rsyslogd');
export const OPENSSL = which('openssl');

/** Skip reason when the Debian programs are missing. */
export function rsyslogMissing(): string | false {
  if (RSYSLOGD === null) return 'needs Debian package rsyslog (and rsyslog-gnutls)';
  if (OPENSSL === null) return 'needs openssl';
  return false;
}

async function freePort(proto: 'tcp' = 'tcp'): Promise<number> {
  void proto;
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export function openssl(args: string[], cwd: string): void {
  const r = spawnSync(OPENSSL as string, args, { cwd, encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** In `dir`: a test CA (`ca.pem`, `ca.key`) and a certificate for localhost and 127.0.0.1 it signed (`cert.pem`, `key.pem`). */
export function localhostPki(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=svc-test-ca'], dir);
  openssl(['req', ...ec, '-keyout', 'key.pem', '-out', 'srv.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  const sign = ['x509', '-req', '-in', 'srv.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'];
  openssl([...sign, '-out', 'cert.pem', '-days', '2', '-extfile', 'ext.cnf'], dir);
}

export interface Received {
  raw: string;
  pri: string;
  version: string;
  hostname: string;
  app: string;
  msgid: string;
  sd: string;
  msg: string;
  input: string;
}

export interface Rsyslog {
  dir: string;
  tlsPort: number;
  tcpPort: number;
  lfPort: number;
  udpPort: number;
  /** CA file the receiver's certificate chains to */
  caFile: string;
  /** a CA that signed nothing the receiver serves */
  wrongCaFile: string;
  /** a client certificate and key (for mutual TLS settings; the receiver accepts anonymous clients too) */
  clientCertFile: string;
  clientKeyPem: string;
  rawFile: string;
  /** records written so far (complete lines only) */
  received(): Received[];
  /** waits (bounded) until at least `n` records arrived */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  start(): Promise<void>;
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startRsyslog(): Promise<Rsyslog> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rsyslog-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  localhostPki(dir);
  openssl(['req', '-x509', ...ec, '-keyout', 'wrong.key', '-out', 'wrong-ca.pem', '-days', '2', '-subj', '/CN=svc-other-ca'], dir);
  openssl(['req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=svc-client'], dir);
  openssl(
    ['x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.pem', '-days', '2'],
    dir,
  );
  const [tlsPort, tcpPort, lfPort, udpPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const rawFile = join(dir, 'raw.log');
  const jsonFile = join(dir, 'parsed.jsonl');
  const prop = (name: string, key: string, first = false): string =>
    `constant(value="${first ? '{' : ','}\\"${key}\\":\\"") property(name="${name}" format="json") constant(value="\\"")`;
  const conf = `
global(workDirectory="${dir}" defaultNetstreamDriverCAFile="${dir}/ca.pem"
  defaultNetstreamDriverCertFile="${dir}/cert.pem" defaultNetstreamDriverKeyFile="${dir}/key.pem"
  parser.escapeControlCharactersOnReceive="off" maxMessageSize="256k")
module(load="imtcp")
module(load="imudp")
template(name="raw" type="string" string="%rawmsg%\\n")
template(name="parsed" type="list") {
  ${prop('rawmsg', 'raw', true)} ${prop('pri', 'pri')} ${prop('protocol-version', 'version')} ${prop('hostname', 'hostname')}
  ${prop('app-name', 'app')} ${prop('msgid', 'msgid')} ${prop('structured-data', 'sd')} ${prop('msg', 'msg')} ${prop('inputname', 'input')}
  constant(value="}\\n")
}
ruleset(name="svc") {
  action(type="omfile" file="${rawFile}" template="raw")
  action(type="omfile" file="${jsonFile}" template="parsed")
}
input(type="imtcp" address="127.0.0.1" port="${tlsPort}" ruleset="svc" streamDriver.name="gtls" streamDriver.mode="1" ` +
  `streamDriver.authMode="anon")
input(type="imtcp" address="127.0.0.1" port="${tcpPort}" ruleset="svc")
input(type="imtcp" address="127.0.0.1" port="${lfPort}" ruleset="svc")
input(type="imudp" address="127.0.0.1" port="${udpPort}" ruleset="svc")
`;
  writeFileSync(join(dir, 'rsyslog.conf'), conf);
  const ca = readFileSync(join(dir, 'ca.pem'));
  let child: ChildProcess | undefined;
  let stderr = '';

  const start = async (): Promise<void> => {
    stderr = '';
    const c = spawn(RSYSLOGD as string, ['-n', '-f', join(dir, 'rsyslog.conf'), '-i', join(dir, 'rsyslogd.pid')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child = c;
    // No readiness signal in the foreground: probe the TLS listener (bounded).
    for (let i = 0; i < 100; i++) {
      if (c.exitCode !== null) break;
      const ok = await new Promise<boolean>((resolve) => {
        const s = tls.connect({ host: '127.0.0.1', port: tlsPort, ca, servername: 'localhost' }, () => {
          s.end();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    c.kill('SIGKILL');
    throw new Error(`rsyslogd did not start: ${stderr}`);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    await exited;
  };
  const received = (): Received[] => {
    if (!existsSync(jsonFile)) return [];
    const lines = readFileSync(jsonFile, 'utf8').split('\n');
    lines.pop();
    return lines.filter((l) => l !== '').map((l) => JSON.parse(l) as Received);
  };
  await start();
  return {
    dir,
    tlsPort,
    tcpPort,
    lfPort,
    udpPort,
    caFile: join(dir, 'ca.pem'),
    wrongCaFile: join(dir, 'wrong-ca.pem'),
    clientCertFile: join(dir, 'client.pem'),
    clientKeyPem: readFileSync(join(dir, 'client.key'), 'utf8'),
    rawFile,
    received,
    waitFor: async (n, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = received();
        if (r.length >= n || Date.now() > deadline) return r;
        await new Promise((res) => setTimeout(res, 100));
      }
    },
    start,
    stop,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
