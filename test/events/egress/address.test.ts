/**
 * The egress guard's normaliser and classifier over a table of spellings (issue 47 item 9), and
 * the operator allowlist (SERVICE_EGRESS_ALLOW_PRIVATE) and development flag that lift a refusal.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classify, normaliseHost } from '../../../src/events/egress/address.js';
import { parsePolicy, refusal } from '../../../src/events/egress/policy.js';

/** spelling → normal form → class (null: public) */
const TABLE: Array<[string, string, string | null]> = [
  ['127.0.0.1', '127.0.0.1', 'loopback'],
  ['2130706433', '127.0.0.1', 'loopback'],
  ['0x7f.1', '127.0.0.1', 'loopback'],
  ['0x7F000001', '127.0.0.1', 'loopback'],
  ['0177.0.0.1', '127.0.0.1', 'loopback'],
  ['127.1', '127.0.0.1', 'loopback'],
  ['127.0.0.1.', '127.0.0.1', 'loopback'],
  ['[::1]', '::1', 'loopback'],
  ['::1', '::1', 'loopback'],
  ['[0:0:0:0:0:0:0:1]', '::1', 'loopback'],
  ['[::ffff:127.0.0.1]', '::ffff:7f00:1', 'loopback (127.0.0.1 in IPv4-mapped ::ffff:0:0/96)'],
  ['[::ffff:7f00:1]', '::ffff:7f00:1', 'loopback (127.0.0.1 in IPv4-mapped ::ffff:0:0/96)'],
  ['[::ffff:0:7f00:1]', '::ffff:0:7f00:1', 'loopback (127.0.0.1 in IPv4-translated ::ffff:0:0:0/96)'],
  ['[64:ff9b::7f00:1]', '64:ff9b::7f00:1', 'loopback (127.0.0.1 in NAT64 64:ff9b::/96)'],
  ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1', 'loopback (127.0.0.1 in NAT64 64:ff9b::/96)'],
  ['[64:ff9b::a9fe:a9fe]', '64:ff9b::a9fe:a9fe', 'linkLocal (169.254.169.254 in NAT64 64:ff9b::/96)'],
  ['[2002:7f00:1::1]', '2002:7f00:1::1', 'loopback (127.0.0.1 in 6to4 2002::/16)'],
  ['[::7f00:1]', '::7f00:1', 'ipv4Compatible'],
  ['[::127.0.0.1]', '::7f00:1', 'ipv4Compatible'],
  ['169.254.169.254', '169.254.169.254', 'linkLocal'],
  ['0xa9fea9fe', '169.254.169.254', 'linkLocal'],
  ['[fe80::1]', 'fe80::1', 'linkLocal'],
  ['fe80::1%eth0', 'fe80::1', 'linkLocal'],
  ['10.1.2.3', '10.1.2.3', 'private'],
  ['012.1.2.3', '10.1.2.3', 'private'],
  ['172.16.0.1', '172.16.0.1', 'private'],
  ['172.31.255.255', '172.31.255.255', 'private'],
  ['192.168.1.1', '192.168.1.1', 'private'],
  ['100.64.0.1', '100.64.0.1', 'carrierGradeNat'],
  ['[fc00::1]', 'fc00::1', 'uniqueLocal'],
  ['[fd12:3456::1]', 'fd12:3456::1', 'uniqueLocal'],
  ['0.0.0.0', '0.0.0.0', 'unspecified'],
  ['0', '0.0.0.0', 'unspecified'],
  ['[::]', '::', 'unspecified'],
  ['224.0.0.1', '224.0.0.1', 'multicast'],
  ['[ff02::1]', 'ff02::1', 'multicast'],
  ['255.255.255.255', '255.255.255.255', 'broadcast'],
  ['192.0.2.1', '192.0.2.1', 'reserved'],
  ['240.0.0.1', '240.0.0.1', 'reserved'],
  ['[2001:db8::1]', '2001:db8::1', 'reserved'],
  // public
  ['8.8.8.8', '8.8.8.8', null],
  ['134744072', '8.8.8.8', null],
  ['172.32.0.1', '172.32.0.1', null],
  ['[2606:4700:4700::1111]', '2606:4700:4700::1111', null],
  ['[::ffff:8.8.8.8]', '::ffff:808:808', null],
  ['[64:ff9b::808:808]', '64:ff9b::808:808', null],
];

describe('egress: normal form and class of every spelling', () => {
  for (const [spelling, normal, cls] of TABLE) {
    it(`${spelling} → ${normal} (${cls ?? 'public'})`, () => {
      const n = normaliseHost(spelling);
      assert.equal(n, normal);
      assert.equal(classify(n), cls);
    });
  }

  it('names: lower case, IDNA to ASCII, trailing dots dropped', () => {
    assert.equal(normaliseHost('LOCALHOST'), 'localhost');
    assert.equal(normaliseHost('localhost.'), 'localhost');
    assert.equal(normaliseHost('Hooks.Example.COM.'), 'hooks.example.com');
    assert.equal(normaliseHost('bücher.example'), 'xn--bcher-kva.example');
    assert.throws(() => normaliseHost('a b'), /not a host/);
    assert.throws(() => normaliseHost(''), /not a host/);
  });
});

describe('egress: the policy', () => {
  const none = parsePolicy({});
  it('refuses every non-public class by default, and localhost names whatever they resolve to', () => {
    for (const [spelling, normal, cls] of TABLE) {
      const why = refusal(none, normal, 443, normal);
      if (cls === null) assert.equal(why, null, spelling);
      else assert.match(String(why), /SERVICE_EGRESS_ALLOW_PRIVATE/, spelling);
    }
    assert.match(String(refusal(none, 'localhost', 443, '8.8.8.8')), /localhost name/);
    assert.match(String(refusal(none, 'a.localhost', 443, '8.8.8.8')), /loopback/);
    assert.match(String(refusal(none, 'vm', 443, '127.0.0.1')), /vm \(resolved to 127\.0\.0\.1\) is a loopback/);
  });

  it('the development flag allows loopback (all spellings) and nothing else', () => {
    const dev = parsePolicy({ SERVICE_EVENTING_ALLOW_INSECURE_ENDPOINTS: 'true' });
    for (const a of ['127.0.0.1', '::1', '::ffff:7f00:1', '64:ff9b::7f00:1']) assert.equal(refusal(dev, a, 80, a), null, a);
    assert.equal(refusal(dev, 'localhost', 80, '127.0.0.1'), null);
    for (const a of ['169.254.169.254', '10.0.0.1', 'fc00::1', '0.0.0.0', '::ffff:a9fe:a9fe']) {
      assert.notEqual(refusal(dev, a, 80, a), null, a);
    }
  });

  it('SERVICE_EGRESS_ALLOW_PRIVATE: ranges, addresses with ports, names with ports', () => {
    const list = '10.0.0.0/8, fd00::/8,192.168.1.5:6514,[fc00::7]:443,syslog.internal:6514 Hooks.Corp.';
    const p = parsePolicy({ SERVICE_EGRESS_ALLOW_PRIVATE: list });
    assert.equal(refusal(p, '10.9.9.9', 1, '10.9.9.9'), null);
    assert.equal(refusal(p, '::ffff:a09:909', 1, '::ffff:a09:909'), null, 'the mapped form of an allowed IPv4');
    assert.equal(refusal(p, 'fd00::5', 1, 'fd00::5'), null);
    assert.equal(refusal(p, '192.168.1.5', 6514, '192.168.1.5'), null);
    assert.notEqual(refusal(p, '192.168.1.5', 443, '192.168.1.5'), null, 'another port');
    assert.equal(refusal(p, 'fc00::7', 443, 'fc00::7'), null);
    assert.equal(refusal(p, 'syslog.internal', 6514, '172.20.0.4'), null);
    assert.notEqual(refusal(p, 'syslog.internal', 514, '172.20.0.4'), null, 'another port');
    assert.equal(refusal(p, 'hooks.corp', 443, '192.168.7.7'), null);
    assert.notEqual(refusal(p, 'other.corp', 443, '192.168.7.7'), null);
    assert.notEqual(refusal(p, '127.0.0.1', 443, '127.0.0.1'), null, 'loopback is not in the list');
    assert.notEqual(refusal(p, 'localhost', 443, '10.0.0.1'), null, 'a localhost name is loopback, not 10/8');
  });

  it('a bad entry is refused naming it', () => {
    for (const bad of ['10.0.0.0/33', 'host:99999', 'a b/8', '[::1', 'x:y']) {
      assert.throws(() => parsePolicy({ SERVICE_EGRESS_ALLOW_PRIVATE: bad }), /SERVICE_EGRESS_ALLOW_PRIVATE/, bad);
    }
  });
});
