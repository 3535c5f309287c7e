/**
 * The minimal same-origin step-up page (`GET /ui/step-up`, source `web/step-up.html`). WebAuthn
 * only runs in a secure context on the RP's own origin (W3C WebAuthn L3 §5.1.3), so the page is
 * served by `svc serve` itself. Its CSP allows exactly its own inline script and style, by hash
 * (CSP Level 3 §8.3), and connections back to this origin only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { reply } from '../../http/reply.js';

// dist/src/core/webauthn/ → repository root → web/
const PAGE_URL = new URL('../../../../web/step-up.html', import.meta.url);

interface Page {
  html: string;
  csp: string;
}

let page: Page | undefined;

/** The page and its CSP, read once; the CSP names the SHA-256 of every inline script and style block. */
export function stepUpPage(): Page {
  if (page) return page;
  const html = readFileSync(fileURLToPath(PAGE_URL), 'utf8');
  const hashes = (tag: string): string[] =>
    [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map(
      (m) =>
        `'sha256-${createHash('sha256')
          .update(m[1] ?? '', 'utf8')
          .digest('base64')}'`,
    );
  const csp = [
    "default-src 'none'",
    `script-src ${hashes('script').join(' ')}`,
    `style-src ${hashes('style').join(' ')}`,
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  page = { html, csp };
  return page;
}

export const stepUpUiRoutes: AnyRoute[] = [
  route({
    method: 'GET',
    path: '/ui/step-up',
    stability: 'stable',
    // A same-origin HTML page for the browser's WebAuthn API, not a JSON contract route.
    unlisted: 'ui-asset',
    setupExempt: true,
    permission: PUBLIC,
    operationId: 'uiStepUp',
    summary: 'Same-origin page that registers a WebAuthn authenticator and steps a session up to AAL3',
    tags: ['ui'],
    produces: 'text/html; charset=utf-8',
    handler: () => {
      const p = stepUpPage();
      return reply.text(p.html, 'text/html; charset=utf-8', 200, { 'content-security-policy': p.csp });
    },
  }),
];
