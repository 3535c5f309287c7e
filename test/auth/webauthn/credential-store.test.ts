/** WebAuthn tables (migration 4) and ceremony guards on both store backends. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testStores } from '../../helpers/stores.js';
import { uuid7 } from '../../../src/ledger/uuid7.js';
import { nowTimestamp, timestampFromDate } from '../../../src/ledger/time.js';
import {
  consumeChallenge,
  credentialIdTaken,
  deleteCredential,
  findCredential,
  insertCredential,
  listCredentials,
  recordUse,
  saveChallenge,
} from '../../../src/auth/webauthn/credential-store.js';
import { finishStepUp, startRegistration, startStepUp } from '../../../src/auth/webauthn/ceremony.js';
import type { Store } from '../../../src/store/store.js';
import { ApiError } from '../../../src/contract/errors.js';

const settings = { rpId: 'localhost', rpName: 'svc', origins: [] };

async function addUser(store: Store): Promise<string> {
  const id = uuid7();
  const now = nowTimestamp();
  await store.transaction((tx) =>
    tx
      .insertInto('users')
      .values({ id, email: `${id}@example.test`, password_hash: 'x', superadmin: 0, status: 'active', created_at: now, updated_at: now })
      .execute(),
  );
  return id;
}

for (const backend of await testStores()) {
  test(`${backend.backend}: webauthn credentials and single-use challenges`, { skip: backend.skip }, async () => {
    const t = await backend.create();
    try {
      await t.store.migrate();
      const store = t.store;
      const alice = await addUser(store);
      const bob = await addUser(store);
      const session = uuid7();

      // Challenges: bound to session and purpose, taken once, expired ones refused.
      const cid = uuid7();
      const expiresAt = timestampFromDate(new Date(Date.now() + 60_000));
      await store.transaction((tx) =>
        saveChallenge(tx, { id: cid, userId: alice, sessionId: session, purpose: 'step_up', challenge: 'abc', expiresAt }, nowTimestamp()),
      );
      assert.equal(
        await store.transaction((tx) => consumeChallenge(tx, cid, uuid7(), 'step_up', nowTimestamp())),
        undefined,
        'another session cannot use it',
      );
      // …and that attempt burned it: a challenge is never offered twice.
      assert.equal(await store.transaction((tx) => consumeChallenge(tx, cid, session, 'step_up', nowTimestamp())), undefined);
      const cid2 = uuid7();
      await store.transaction((tx) =>
        saveChallenge(tx, { id: cid2, userId: alice, sessionId: session, purpose: 'step_up', challenge: 'def', expiresAt }, nowTimestamp()),
      );
      assert.equal(
        await store.transaction((tx) => consumeChallenge(tx, cid2, session, 'register', nowTimestamp())),
        undefined,
        'wrong purpose',
      );
      const cid3 = uuid7();
      await store.transaction((tx) =>
        saveChallenge(
          tx,
          { id: cid3, userId: alice, sessionId: session, purpose: 'register', challenge: 'ghi', expiresAt },
          nowTimestamp(),
        ),
      );
      assert.equal((await store.transaction((tx) => consumeChallenge(tx, cid3, session, 'register', nowTimestamp())))?.challenge, 'ghi');
      assert.equal(await store.transaction((tx) => consumeChallenge(tx, cid3, session, 'register', nowTimestamp())), undefined, 'replay');
      const old = uuid7();
      await store.transaction((tx) =>
        saveChallenge(
          tx,
          {
            id: old,
            userId: alice,
            sessionId: session,
            purpose: 'register',
            challenge: 'old',
            expiresAt: timestampFromDate(new Date(Date.now() - 1000)),
          },
          timestampFromDate(new Date(Date.now() - 60_000)),
        ),
      );
      assert.equal(await store.transaction((tx) => consumeChallenge(tx, old, session, 'register', nowTimestamp())), undefined, 'expired');

      // Credentials: per user, unique id, counter and last use recorded, delete only your own.
      const cred = {
        id: uuid7(),
        userId: alice,
        credentialId: 'Y3JlZGVudGlhbC1pZC0wMDAx',
        publicKey: new Uint8Array([1, 2, 3, 250]),
        signCount: 0,
        transports: ['internal', 'hybrid'],
        name: 'laptop',
        deviceType: 'singleDevice',
        backedUp: false,
        createdAt: nowTimestamp(),
        lastUsedAt: null,
      };
      await store.transaction((tx) => insertCredential(tx, cred));
      await assert.rejects(
        store.transaction((tx) => insertCredential(tx, { ...cred, id: uuid7(), userId: bob })),
        'credential ids are unique',
      );
      assert.equal(await store.transaction((tx) => credentialIdTaken(tx, cred.credentialId)), true);
      assert.equal(await store.transaction((tx) => findCredential(tx, bob, cred.credentialId)), undefined);
      await store.transaction((tx) => recordUse(tx, cred.id, 3_000_000_000, nowTimestamp()));
      const [listed] = await store.transaction((tx) => listCredentials(tx, alice));
      assert.deepEqual(listed?.publicKey, cred.publicKey);
      assert.deepEqual(listed?.transports, ['internal', 'hybrid']);
      assert.equal(listed?.signCount, 3_000_000_000, 'a uint32 counter above 2^31 survives');
      assert.ok(listed?.lastUsedAt);
      assert.equal(await store.transaction((tx) => deleteCredential(tx, bob, cred.id)), false);
      assert.equal(await store.transaction((tx) => deleteCredential(tx, alice, cred.id)), true);
      assert.deepEqual(await store.transaction((tx) => listCredentials(tx, alice)), []);

      // Ceremony guards: no credential → 409; a forged origin → 403 and the challenge is gone.
      const subject = { userId: alice, email: 'a@example.test', sessionId: session };
      await assert.rejects(startStepUp(store, settings, subject), (e: unknown) => e instanceof ApiError && e.code === 'conflict');
      const reg = await startRegistration(store, settings, subject);
      assert.equal(reg.public_key.rp.id, 'localhost');
      assert.equal(reg.public_key.authenticatorSelection?.userVerification, 'required');
      await store.transaction((tx) => insertCredential(tx, { ...cred, id: uuid7(), credentialId: 'Y3JlZGVudGlhbC1pZC0wMDAy' }));
      const start = await startStepUp(store, settings, subject);
      assert.equal(start.public_key.userVerification, 'required');
      assert.deepEqual(start.public_key.allowCredentials?.map((c) => c.id), ['Y3JlZGVudGlhbC1pZC0wMDAy']);
      const clientDataJSON = Buffer.from(
        JSON.stringify({ type: 'webauthn.get', challenge: start.public_key.challenge, origin: 'https://evil.example' }),
      ).toString('base64url');
      const forged = {
        id: 'Y3JlZGVudGlhbC1pZC0wMDAy',
        rawId: 'Y3JlZGVudGlhbC1pZC0wMDAy',
        type: 'public-key' as const,
        response: { clientDataJSON, authenticatorData: 'AA', signature: 'AA' },
        clientExtensionResults: {},
      };
      await assert.rejects(
        finishStepUp(store, settings, subject, start.challenge_id, forged),
        (e: unknown) => e instanceof ApiError && e.code === 'forbidden' && /origin/.test(e.message),
      );
      await assert.rejects(
        finishStepUp(store, settings, subject, start.challenge_id, forged),
        (e: unknown) => e instanceof ApiError && e.code === 'bad_request',
        'the challenge was used up',
      );
    } finally {
      await t.dispose();
    }
  });
}
