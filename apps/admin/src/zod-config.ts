import { z } from 'zod';

// zod probes whether `new Function` is allowed the first time it parses an object. The host's
// Content-Security-Policy forbids eval, so the probe fails, and Chromium reports the caught attempt as a CSP
// violation on every page. jitless skips the probe (and the compiled fast path it would enable); parsing is the same.
// Imported first by main.tsx, before any module that could parse a schema.
z.config({ jitless: true });
