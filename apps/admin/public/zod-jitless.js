// zod probes whether `new Function` is allowed the first time it parses an object. The host's
// Content-Security-Policy forbids eval, so the probe fails, and Chromium reports the caught attempt as a CSP
// violation. jitless skips the probe (and the compiled fast path it would enable); parsing is the same.
//
// zod takes its configuration from globalThis.__zod_globalConfig when it loads. The build splits the app into
// chunks, and the one holding zod also holds modules that parse a schema as they load (the protocol's
// defaults), before any code of the entry runs: so this plain script, which runs before every module script,
// sets it.
(globalThis.__zod_globalConfig ??= {}).jitless = true;
