/**
 * The ledger's signing keys: one active key and the retired ones, with the seq range each signed per chain.
 * Layout under `<dataDir>/audit-keys/` (directory 0700):
 *   keyring.json       {version:1, active, keys:[{key_id, algorithm, public_key, created_at, retired_at?, file?, ranges}]}
 *   <key_id>.pem       PKCS#8 private key of a minted key, mode 0600
 * A key supplied by file (`SERVICE_AUDIT_KEY_FILE`, algorithm `SERVICE_AUDIT_KEY_ALG` or inferred) is read
 * from its path and never copied. Private key files with any group/world permission bit are refused.
 * `ranges[tenant]` = {first_seq, last_seq?}: rotation closes the old key at each chain's head seq and
 * opens the new one at head + 1; a chain with no entry for the active key started under it (first_seq 1).
 */
import { createPrivateKey } from 'node:crypto';
import { constants as fsc } from 'node:fs';
import { mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Store } from '../store/store-types.js';
import { keyringIsShared, readSharedKeyring, withKeyringLock, writeSharedKeyring, type SharedKeyringDoc } from './keyring-shared.js';
import { keySet, type KeySet } from './keyset.js';
import {
  DEFAULT_ALGORITHM,
  createSigner,
  createVerifier,
  generateKey,
  inferAlgorithm,
  isSignatureAlgorithm,
  parsePublicKey,
  privateKeyPem,
  publicKeyBytes,
  publicKeyPem,
  type SignatureAlgorithm,
  type Signer,
} from './signers.js';
import { nowTimestamp } from './time.js';

/** One key as listed by `GET /v1/audit/pubkey`. */
export interface PublishedKey {
  key_id: string;
  algorithm: SignatureAlgorithm;
  /** base64: raw 32 bytes for Ed25519, SPKI DER otherwise */
  public_key: string;
  pem: string;
  first_seq: number;
  last_seq?: number;
}

interface SeqRange {
  first_seq: number;
  last_seq?: number;
}

interface StoredKey {
  key_id: string;
  algorithm: SignatureAlgorithm;
  public_key: string;
  created_at: string;
  retired_at?: string;
  /** file name of a minted private key inside the key directory */
  file?: string;
  ranges: Record<string, SeqRange>;
}

interface KeyringFile {
  version: 1;
  active: string;
  keys: StoredKey[];
}

/** How to open the keyring. */
export interface KeyringOptions {
  dataDir: string;
  /** Private key PEM path; default `SERVICE_AUDIT_KEY_FILE`. */
  keyFile?: string;
  /** Algorithm of a supplied or minted key; default `SERVICE_AUDIT_KEY_ALG`, else inferred / ed25519. */
  algorithm?: SignatureAlgorithm;
  env?: Record<string, string | undefined>;
  /** Chain heads (tenant → head seq), needed only when a supplied key replaces the recorded active key. */
  chainHeads?: () => Promise<ReadonlyMap<string, number>>;
  /**
   * The store: on one shared by replicas (Postgres), the keyring's public half lives in it and this
   * process may only sign with the active key (keyring-shared.ts); on SQLite it is not used.
   */
  store?: Store;
}

/** Thrown when key material is unsafe or inconsistent; the message names the file. */
export class KeyringError extends Error {
  override readonly name = 'KeyringError';
  /** `key_not_active`: a replica's key is not the deployment's active key (svc serve exits 5) */
  constructor(
    message: string,
    readonly code?: 'key_not_active',
  ) {
    super(message);
  }
}

/** The opened keyring. */
export class Keyring {
  private constructor(
    private readonly dir: string,
    private state: KeyringFile,
    private signer: Signer,
    private pem: string,
  ) {}

  /** The store holding the deployment's keyring, when shared (Postgres). */
  private shared: Store | undefined;

  /** True when the keyring lives in a store shared by replicas. */
  get isShared(): boolean {
    return this.shared !== undefined;
  }

  /** Open (or on first use, mint) the keyring in `opts.dataDir`. */
  static async open(opts: KeyringOptions): Promise<Keyring> {
    if (keyringIsShared(opts.store)) return Keyring.openShared(opts, opts.store);
    const env = opts.env ?? process.env;
    const dir = join(opts.dataDir, 'audit-keys');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const state = await readState(dir);
    const algEnv = env['SERVICE_AUDIT_KEY_ALG'];
    if (algEnv !== undefined && algEnv !== '' && !isSignatureAlgorithm(algEnv)) {
      throw new KeyringError(`SERVICE_AUDIT_KEY_ALG: unknown algorithm ${JSON.stringify(algEnv)}`);
    }
    const alg = opts.algorithm ?? (algEnv ? (algEnv as SignatureAlgorithm) : undefined);
    const keyFile = opts.keyFile ?? (env['SERVICE_AUDIT_KEY_FILE'] || undefined);

    if (keyFile !== undefined) {
      const pem = await readPrivateKeyFile(keyFile);
      const key = createPrivateKey(pem);
      const signer = createSigner(alg ?? inferAlgorithm(key), key);
      const ring = new Keyring(dir, state ?? { version: 1, active: signer.keyId, keys: [] }, signer, pem);
      if (state === null || state.keys.length === 0) {
        ring.state.keys = [ring.describe(signer, undefined)];
        await ring.save();
      } else if (state.active !== signer.keyId) {
        if (opts.chainHeads === undefined) {
          throw new KeyringError(`${keyFile}: key ${signer.keyId} differs from active key ${state.active}; rotation needs the chain heads`);
        }
        ring.retireActive(await opts.chainHeads(), signer, undefined);
        await ring.save();
      }
      return ring;
    }

    if (state !== null) {
      const active = state.keys.find((k) => k.key_id === state.active);
      if (active?.file === undefined) {
        throw new KeyringError(`${join(dir, 'keyring.json')}: active key ${state.active} has no key file; set SERVICE_AUDIT_KEY_FILE`);
      }
      const pem = await readPrivateKeyFile(join(dir, active.file));
      const signer = createSigner(active.algorithm, pem);
      if (signer.keyId !== active.key_id) throw new KeyringError(`${active.file}: key does not match key_id ${active.key_id}`);
      return new Keyring(dir, state, signer, pem);
    }

    const { signer, pem, file } = await mintKey(dir, alg ?? DEFAULT_ALGORITHM);
    const ring = new Keyring(dir, { version: 1, active: signer.keyId, keys: [] }, signer, pem);
    ring.state.keys = [ring.describe(signer, file)];
    await ring.save();
    return ring;
  }

  /**
   * On a shared store: the database's keyring is the deployment's. The first process to start
   * records its own (data directory or key file); every later one must hold the active key, from
   * the key file (`SERVICE_AUDIT_KEY_FILE`) or, on the replica that minted it, its data directory.
   */
  private static async openShared(opts: KeyringOptions, store: Store): Promise<Keyring> {
    return withKeyringLock(store, async (tx) => {
      const doc = await readSharedKeyring(tx);
      if (doc === null) {
        const ring = await Keyring.open({ ...opts, store: undefined });
        await writeSharedKeyring(tx, ring.state as SharedKeyringDoc);
        ring.shared = store;
        return ring;
      }
      const env = opts.env ?? process.env;
      const dir = join(opts.dataDir, 'audit-keys');
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const keyFile = opts.keyFile ?? (env['SERVICE_AUDIT_KEY_FILE'] || undefined);
      const source = keyFile ?? join(dir, `${doc.active}.pem`);
      let pem: string;
      try {
        pem = await readPrivateKeyFile(source);
      } catch (err) {
        if (keyFile !== undefined || (err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        throw new KeyringError(
          `the deployment's active audit key ${doc.active} (recorded in the database) is not available to this replica: give every ` +
            `replica the same key file (SERVICE_AUDIT_KEY_FILE; docs/scale-out.md)`,
          'key_not_active',
        );
      }
      const active = doc.keys.find((k) => k.key_id === doc.active);
      const key = createPrivateKey(pem);
      // The active key's algorithm when the file holds a key of that kind (it may be the active key), else the file's own.
      let signer: Signer;
      try {
        signer = createSigner(active !== undefined && isSignatureAlgorithm(active.algorithm) ? active.algorithm : inferAlgorithm(key), key);
      } catch {
        signer = createSigner(inferAlgorithm(key), key);
      }
      if (signer.keyId !== doc.active) {
        const retired = doc.keys.find((k) => k.key_id === signer.keyId);
        throw new KeyringError(
          retired !== undefined
            ? `${source}: audit key ${signer.keyId} was retired${retired.retired_at ? ` at ${retired.retired_at}` : ''}; the ` +
                `deployment's active key is ${doc.active}: give this replica the active key file`
            : `${source}: audit key ${signer.keyId} is not the deployment's active key ${doc.active}; make it active once for the ` +
                `deployment with "svc keys rotate --store postgres --key-file ${source}", then start every replica with it`,
          'key_not_active',
        );
      }
      const ring = new Keyring(dir, doc as KeyringFile, signer, pem);
      ring.shared = store;
      await ring.save();
      return ring;
    });
  }

  /** Re-read the deployment's keyring (shared store only): another process may have rotated. */
  async refresh(): Promise<void> {
    const store = this.shared;
    if (store === undefined) return;
    const doc = await store.transaction((tx) => readSharedKeyring(tx));
    if (doc !== null) this.state = doc as KeyringFile;
  }

  /**
   * Rotation for the deployment (shared store): under the keyring lock held exclusively (ledger
   * commits wait; see keyring-shared.ts), read every chain's head, retire the active key there and
   * make the supplied key (`keyPem`) or a freshly minted one active, once, in the database.
   */
  async rotateShared(
    heads: () => Promise<ReadonlyMap<string, number>>,
    algorithm: SignatureAlgorithm,
    keyPem?: string,
  ): Promise<{ signer: Signer; heads: ReadonlyMap<string, number> }> {
    const store = this.shared;
    if (store === undefined) throw new KeyringError('rotateShared needs a shared keyring');
    return withKeyringLock(store, async (tx) => {
      const doc = await readSharedKeyring(tx);
      if (doc !== null) this.state = doc as KeyringFile;
      const at = await heads();
      let next: Signer;
      let file: string | undefined;
      if (keyPem !== undefined) {
        next = createSigner(inferAlgorithm(createPrivateKey(keyPem)), keyPem);
        this.pem = keyPem;
      } else {
        const minted = await mintKey(this.dir, algorithm);
        next = minted.signer;
        file = minted.file;
        this.pem = minted.pem;
      }
      this.retireActive(at, next, file);
      await writeSharedKeyring(tx, this.state as SharedKeyringDoc);
      await this.save();
      return { signer: next, heads: at };
    });
  }

  /** The active signer. */
  get active(): Signer {
    return this.signer;
  }

  /** Active key material for the worker pool (given once at pool start, never per task). */
  signingKey(): { key_id: string; algorithm: SignatureAlgorithm; pem: string } {
    return { key_id: this.signer.keyId, algorithm: this.signer.algorithm, pem: this.pem };
  }

  /**
   * Mint a new active key (algorithm default: the current one) and retire the old one at each chain's
   * head seq. The caller must hold every chain's append lock so no record is signed in between.
   */
  async rotate(heads: ReadonlyMap<string, number>, algorithm: SignatureAlgorithm = this.signer.algorithm): Promise<Signer> {
    const { signer, pem, file } = await mintKey(this.dir, algorithm);
    this.retireActive(heads, signer, file);
    this.pem = pem;
    await this.save();
    return signer;
  }

  /** `GET /v1/audit/pubkey` for one chain: the active key and every retired key that signed in it. */
  publishedKeys(tenant: string): { keys: PublishedKey[] } {
    const keys: PublishedKey[] = [];
    for (const k of this.state.keys) {
      const r = k.ranges[tenant];
      const isActive = k.key_id === this.state.active;
      if (!isActive && (r?.last_seq === undefined || r.last_seq < r.first_seq)) continue; // never signed this chain
      const pub = parsePublicKey(k.algorithm, k.public_key);
      const entry: PublishedKey = {
        key_id: k.key_id,
        algorithm: k.algorithm,
        public_key: k.public_key,
        pem: publicKeyPem(pub),
        first_seq: r?.first_seq ?? 1,
      };
      if (!isActive && r?.last_seq !== undefined) entry.last_seq = r.last_seq;
      keys.push(entry);
    }
    return { keys };
  }

  /** The key set to verify one chain with, seq ranges included. */
  keySet(tenant: string): KeySet {
    return publishedKeySet(this.publishedKeys(tenant).keys);
  }

  private describe(signer: Signer, file: string | undefined): StoredKey {
    const k: StoredKey = {
      key_id: signer.keyId,
      algorithm: signer.algorithm,
      public_key: publicKeyBytes(signer.algorithm, signer.publicKey).toString('base64'),
      created_at: nowTimestamp(),
      ranges: {},
    };
    if (file !== undefined) k.file = file;
    return k;
  }

  private retireActive(heads: ReadonlyMap<string, number>, next: Signer, file: string | undefined): void {
    const old = this.state.keys.find((k) => k.key_id === this.state.active);
    if (old === undefined) throw new KeyringError('keyring has no active key');
    if (this.state.keys.some((k) => k.key_id === next.keyId)) throw new KeyringError(`key ${next.keyId} was already used`);
    const fresh = this.describe(next, file);
    for (const [tenant, head] of heads) {
      old.ranges[tenant] = { first_seq: old.ranges[tenant]?.first_seq ?? 1, last_seq: head };
      fresh.ranges[tenant] = { first_seq: head + 1 };
    }
    old.retired_at = fresh.created_at;
    this.state.keys.push(fresh);
    this.state.active = next.keyId;
    this.signer = next;
  }

  private async save(): Promise<void> {
    await writeFileAtomic(join(this.dir, 'keyring.json'), `${JSON.stringify(this.state, null, 2)}\n`);
  }
}

/** A key set from a published key list (`GET /v1/audit/pubkey`), retired ranges included. */
export function publishedKeySet(keys: readonly PublishedKey[]): KeySet {
  return keySet(
    keys.map((k) => {
      const entry: { verifier: ReturnType<typeof createVerifier>; first_seq?: number; last_seq?: number } = {
        verifier: createVerifier(k.algorithm, parsePublicKey(k.algorithm, k.public_key)),
        first_seq: k.first_seq,
      };
      if (k.last_seq !== undefined) entry.last_seq = k.last_seq;
      return entry;
    }),
  );
}

async function readState(dir: string): Promise<KeyringFile | null> {
  let text: string;
  try {
    text = await readFile(join(dir, 'keyring.json'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const v = JSON.parse(text) as KeyringFile;
  if (v.version !== 1 || !Array.isArray(v.keys) || typeof v.active !== 'string') {
    throw new KeyringError(`${join(dir, 'keyring.json')}: not a version 1 keyring`);
  }
  return v;
}

/** Read a private key PEM, refusing files that group or others could read or write. */
export async function readPrivateKeyFile(path: string): Promise<string> {
  const st = await stat(path);
  if (!st.isFile()) throw new KeyringError(`${path}: not a regular file`);
  if ((st.mode & 0o077) !== 0) {
    throw new KeyringError(`${path}: private key has mode ${(st.mode & 0o777).toString(8)}; chmod 600 it`);
  }
  return readFile(path, 'utf8');
}

async function mintKey(dir: string, alg: SignatureAlgorithm): Promise<{ signer: Signer; pem: string; file: string }> {
  const { privateKey } = generateKey(alg);
  const signer = createSigner(alg, privateKey);
  const pem = privateKeyPem(privateKey);
  const file = `${signer.keyId}.pem`;
  await writeFileAtomic(join(dir, file), pem);
  return { signer, pem, file };
}

/** Write via a 0600 temp file, fsync, rename, fsync the directory: a crash leaves the old or the new file. */
async function writeFileAtomic(path: string, data: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
  const fh = await open(tmp, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL, 0o600);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  const d = await open(dirname(path), 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
