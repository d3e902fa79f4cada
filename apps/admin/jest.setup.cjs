// jsdom has no TextEncoder; the browser and Node both do, and @host/protocol uses it.
const { TextDecoder, TextEncoder } = require('node:util');
globalThis.TextEncoder ??= TextEncoder;
globalThis.TextDecoder ??= TextDecoder;
