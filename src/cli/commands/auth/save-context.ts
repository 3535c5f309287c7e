/** Writes a named client context after a login or bootstrap (DECISIONS.md "CLI": 0600, atomic). */
import type { ClientSettings } from '../../client/settings.js';

/** Save server, credential, tenant and trust anchors under `name` and make it current; returns the name. */
export async function saveLoginContext(
  env: Record<string, string | undefined>,
  name: string,
  settings: ClientSettings,
  token: string,
  tenant: string | undefined,
): Promise<string> {
  const { configPath, saveContext } = await import('../../client/context.js');
  const server = settings.server.href.replace(/\/$/, '');
  await saveContext(
    configPath(env),
    name,
    {
      server,
      token,
      ...(tenant !== undefined ? { tenant } : {}),
      ...(settings.caCertPem !== undefined ? { ca_cert: settings.caCertPem } : {}),
      ...(settings.pins.length > 0 ? { pin_sha256: settings.pins.map((p) => p.toString('base64')) } : {}),
    },
    { makeCurrent: true },
  );
  return name;
}
