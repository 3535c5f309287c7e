import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ExitCode, exitCodeForStatus, exitCodeForTransport } from '../../../src/cli/client/exit-codes.js';

describe('exit codes', () => {
  it('keep the numbers of the spec table (never renumbered)', () => {
    // Spec "Client exit codes": scripts depend on these exact values.
    assert.deepEqual(
      [
        ExitCode.OK,
        ExitCode.Err,
        ExitCode.Usage,
        ExitCode.Auth,
        ExitCode.NotFound,
        ExitCode.Conflict,
        ExitCode.Server,
        ExitCode.Degraded,
        ExitCode.Indeterminate,
      ],
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
    );
  });

  it('map HTTP statuses as the spec says', () => {
    const cases: Array<[number, number]> = [
      [200, 0], [201, 0], [204, 0],
      [401, 3], [403, 3],
      [404, 4],
      [409, 5],
      [500, 6], [501, 6], [502, 6], [503, 6], [599, 6],
      // Not named by the spec: a generic failure.
      [400, 1], [405, 1], [413, 1], [422, 1], [423, 1], [429, 1], [302, 1],
    ];
    for (const [status, code] of cases) assert.equal(exitCodeForStatus(status), code, `HTTP ${status}`);
  });

  it('treat every transport failure as Server (6)', () => {
    for (const failure of ['unreachable', 'timeout', 'tls_error', 'tls_pin_mismatch'] as const) {
      assert.equal(exitCodeForTransport(failure), 6, failure);
    }
  });
});
