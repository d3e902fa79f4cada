import express, { Router, type RequestHandler } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Content-Security-Policy of the admin app's pages: script, styles and
 * connections only from the host itself, no inline script, no plugins, no
 * framing. Anything a plugin supplies that slipped into the page as markup
 * still could not run. Images may come from web addresses: the playground shows
 * the image a plugin's reply names by its URL, as the QQ client shows the one
 * the platform fetched (an image runs nothing; the page sends no referrer).
 */
export const ADMIN_APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: https: http:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': ADMIN_APP_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Serves the built admin app (`index.html` and its hashed assets) at the site
 * root with a strict Content-Security-Policy. Client-side routes (`/plugins/x`)
 * answer index.html. When the app was not built, `/` says how to build it.
 */
export function adminAppRouter(dir: string): RequestHandler {
  const router = Router();
  router.use((_req, res, next) => {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    next();
  });
  const index = join(dir, 'index.html');
  router.use(
    '/assets',
    express.static(join(dir, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: true, dotfiles: 'ignore' }),
  );
  router.use(express.static(dir, { index: false, dotfiles: 'ignore', maxAge: 0 }));
  router.get(/^\/(?!api(\/|$)|assets\/).*/, (req, res, next) => {
    if (!req.accepts('html')) return next();
    if (!existsSync(index)) {
      res
        .status(503)
        .type('text/plain')
        .send('The admin app is not built. Run "npx nx run admin:build" (npm start does it), then reload this page.\n');
      return;
    }
    res.setHeader('Cache-Control', 'no-cache');
    res.sendFile(index);
  });
  return router;
}
