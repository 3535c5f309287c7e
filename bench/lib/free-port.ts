/** Ask the kernel for an unused loopback TCP port (bind :0, read it, close). */
import { createServer, type AddressInfo } from 'node:net';

/** A port free at the time of the call; a tiny race with other binders remains, so callers bind soon after. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
