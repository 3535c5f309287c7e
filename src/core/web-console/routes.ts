/**
 * `svc serve` answers the web console on the API's own origin (spec: "an embedded web UI on the
 * same origin"; docs/web.md). Every path it answers is declared here, classified as a UI asset
 * (`unlisted`, tag `ui`): the page routes of each console section, which all answer index.html so
 * that a bookmarked URL opens its page, and the content-hashed files under `/assets/`. There is no
 * catch-all, so an unknown API path still answers the JSON 404.
 */
import Type from 'typebox';
import { ApiError } from '../../contract/errors.js';
import { PUBLIC, route, type AnyRoute } from '../../contract/route.js';
import { reply, type Reply } from '../../http/reply.js';
import { consoleBundle, type Asset } from './assets.js';

/**
 * The first path segment of every console page (web/src/pages.ts lists the same). A later module
 * that adds a page adds its segment here: `/<segment>` and `/<segment>/<anything>` then open the SPA.
 */
export const CONSOLE_SECTIONS: readonly string[] = ['login', 'setup', 'overview', 'access-map', 'agents', 'workspaces', 'audit', 'admin'];

/**
 * The console's CSP (CSP Level 3): scripts, styles, images and fonts from this origin only, no
 * inline script or style element, no eval, fetches back to this origin only, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

function serve(ctx: { headers: Readonly<Record<string, string>> }, asset: Asset, cacheControl: string): Reply {
  const headers: Record<string, string> = {
    'cache-control': cacheControl,
    'content-security-policy': CONSOLE_CSP,
    vary: 'accept-encoding',
  };
  const gzip = /\bgzip\b/.test(ctx.headers['accept-encoding'] ?? '');
  if (gzip) headers['content-encoding'] = 'gzip';
  return reply.text(gzip ? asset.gzip : asset.body, asset.type, 200, headers);
}

function notBuilt(): ApiError {
  return new ApiError('unavailable', 'the web console is not built: run `npm run build`');
}

function page(ctx: { headers: Readonly<Record<string, string>> }): Reply {
  const bundle = consoleBundle();
  if (!bundle) throw notBuilt();
  // index.html names the hashed bundle: revalidated each time, so a new build shows at once.
  return serve(ctx, bundle.index, 'no-cache');
}

const ui = {
  stability: 'stable' as const,
  unlisted: 'ui-asset' as const,
  setupExempt: true,
  permission: PUBLIC,
  tags: ['ui'],
  produces: 'text/html; charset=utf-8',
};
const Rest = Type.Object({ rest: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
/**
 * A page URL's query string is the page's state (filters, the selected item), read by the SPA,
 * not by the server: any lower-case name is accepted, values are only bounded.
 */
const PageState = Type.Object(
  {},
  {
    patternProperties: {
      '^[a-z_]{1,40}$': Type.Union([Type.String({ maxLength: 2000 }), Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 20 })]),
    },
    additionalProperties: false,
  },
);
const File = Type.Object({ file: Type.String({ pattern: '^[A-Za-z0-9._-]{1,200}$' }) }, { additionalProperties: false });

const camel = (s: string): string => s.replace(/(^|-)([a-z])/g, (_, __, c: string) => c.toUpperCase());

export const consoleUiRoutes: AnyRoute[] = [
  route({
    ...ui,
    method: 'GET',
    path: '/',
    query: PageState,
    operationId: 'uiConsole',
    summary: 'The web console (single-page application)',
    handler: page,
  }),
  ...CONSOLE_SECTIONS.flatMap((s) => [
    route({
      ...ui,
      method: 'GET',
      path: `/${s}`,
      query: PageState,
      operationId: `uiPage${camel(s)}`,
      summary: `Web console page ${s}`,
      handler: page,
    }),
    route({
      ...ui,
      method: 'GET',
      path: `/${s}/{rest}`,
      params: Rest,
      query: PageState,
      operationId: `uiPage${camel(s)}Detail`,
      summary: `Web console page ${s}, one item`,
      handler: page,
    }),
  ]),
  route({
    ...ui,
    method: 'GET',
    path: '/assets/{file}',
    params: File,
    operationId: 'uiAsset',
    summary: 'A content-hashed file of the web console (script, style, image)',
    produces: 'application/octet-stream',
    handler: (ctx) => {
      const bundle = consoleBundle();
      if (!bundle) throw notBuilt();
      const asset = bundle.assets.get(ctx.params.file);
      if (!asset) throw new ApiError('not_found', 'no such console asset');
      return serve(ctx, asset, IMMUTABLE);
    },
  }),
  route({
    ...ui,
    method: 'GET',
    path: '/favicon.svg',
    operationId: 'uiFavicon',
    summary: 'The web console icon',
    produces: 'image/svg+xml',
    handler: (ctx) => {
      const asset = consoleBundle()?.root.get('favicon.svg');
      if (!asset) throw new ApiError('not_found', 'no console icon');
      return serve(ctx, asset, 'public, max-age=86400');
    },
  }),
];
