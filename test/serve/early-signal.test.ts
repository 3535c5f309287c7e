/**
 * A signal while `svc serve` is still starting is handled once it has started (drain, exit 0),
 * never by Node's default action: a supervisor stopping a server that had just logged
 * 'store ready' used to see it killed by the signal (exit code null) instead of a clean exit.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { SVC_BIN, tempDir } from "../helpers/server.js";

test(
  "SIGTERM during start-up: the server finishes starting, drains and exits 0",
  { timeout: 90_000 },
  async () => {
    const child = spawn(
      process.execPath,
      [
        SVC_BIN,
        "serve",
        "--data-dir",
        tempDir(),
        "--listen",
        "127.0.0.1:0",
        "--grpc-listen",
        "127.0.0.1:0",
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let err = "";
    let sent = false;
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      // The earliest line of a start: the store is open, nothing listens yet.
      if (!sent && /"msg":"store ready"/.test(err)) {
        sent = true;
        child.kill("SIGTERM");
      }
    });
    child.stdout.resume();
    const [code, signal] = await new Promise<
      [number | null, NodeJS.Signals | null]
    >((ok) => child.on("exit", (c, s) => ok([c, s])));
    assert.ok(sent, "the signal was sent during start-up");
    assert.equal(signal, null, `killed by ${signal}: ${err.slice(-400)}`);
    assert.equal(code, 0, err.slice(-400));
  },
);
