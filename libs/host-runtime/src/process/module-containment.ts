import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Keeps a Node plugin's modules inside its package.
 *
 * Node resolves a bare import by walking up from the importing file through
 * every parent folder's `node_modules`. A plugin installed under a folder that
 * has one (a data directory inside a checkout, a home folder with global
 * packages) would quietly load modules that are not in its ZIP: it works on
 * that host and fails on every other. So every plugin process gets, through
 * NODE_OPTIONS, a preload that refuses any `require` or `import` made by a file
 * of the package that resolves to a file outside it (Node built-ins are not
 * files and stay allowed). Code outside the package, such as npm running an
 * `npm start` script, is not affected. A non-Node plugin ignores NODE_OPTIONS.
 *
 * The preload is written to a folder every plugin's user can read, `runtime/`
 * of the data directory (the host is one bundled file, so the scripts are kept
 * here as text), and loaded by `--require`; it
 * patches CommonJS resolution and registers an ES module resolve hook.
 */
export const MODULE_CONTAINMENT_FOLDER = 'module-containment';
/** The `code` of the error a refused import throws in the plugin. */
export const OUTSIDE_PACKAGE_CODE = 'ERR_PLUGIN_MODULE_OUTSIDE_PACKAGE';

const SHARED = String.raw`
function containment(root, fs, path) {
  const real = (file) => {
    try {
      return fs.realpathSync(file);
    } catch {
      return path.resolve(file);
    }
  };
  const base = real(root);
  const known = new Map();
  const inside = (file) => {
    let answer = known.get(file);
    if (answer === undefined) {
      const rel = path.relative(base, real(file));
      answer = rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
      if (known.size < 10000) known.set(file, answer);
    }
    return answer;
  };
  return (specifier, parent, target) => {
    if (!parent || !path.isAbsolute(parent) || !path.isAbsolute(target)) return;
    if (!inside(parent) || inside(target)) return;
    const name = /^(@[^/]+\/[^/]+|[^./][^/]*)/.exec(specifier);
    const fix = name
      ? 'declare "' + name[1] + '" in package.json "dependencies" and pack with "npx host-plugin pack" (it includes the production node_modules), or bundle it into the entry file'
      : 'keep the file inside the package';
    const error = new Error(
      'Cannot load "' + specifier + '" from ' + path.relative(base, real(parent)) + ': it resolves to ' + target +
        ", outside the plugin's package, and a plugin may load only its own files; " + fix + '.',
    );
    error.code = '${OUTSIDE_PACKAGE_CODE}';
    throw error;
  };
}
`;

const PRELOAD = `'use strict';
// Written by the plugin host: refuses modules from outside the plugin's package.
${SHARED}
(function () {
  const root = process.env.HOST_PLUGIN_DIR;
  if (!root) return;
  const fs = require('node:fs');
  const path = require('node:path');
  const Module = require('node:module');
  const check = containment(root, fs, path);
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function (request, parent, isMain, options) {
    const target = resolveFilename.call(this, request, parent, isMain, options);
    if (parent && typeof parent.filename === 'string') check(request, parent.filename, target);
    return target;
  };
  if (typeof Module.register === 'function') {
    const { pathToFileURL } = require('node:url');
    Module.register(pathToFileURL(path.join(__dirname, 'hooks.mjs')).href, { data: { root } });
  }
})();
`;

const HOOKS = `// Written by the plugin host: refuses ES modules from outside the plugin's package.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
${SHARED}
let check = null;
export function initialize(data) {
  if (data && typeof data.root === 'string') check = containment(data.root, fs, path);
}
export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  if (check && context.parentURL && context.parentURL.startsWith('file:') && result.url.startsWith('file:')) {
    check(specifier, fileURLToPath(context.parentURL), fileURLToPath(result.url));
  }
  return result;
}
`;

/**
 * Writes the containment scripts under `stateDir` (once per host start, only
 * when they changed) and answers the NODE_OPTIONS that loads them.
 */
export class ModuleContainment {
  readonly preloadPath: string;
  /** The folder of the scripts (readable by every plugin's user). */
  readonly folder: string;

  constructor(parentDir: string) {
    const dir = join(parentDir, MODULE_CONTAINMENT_FOLDER);
    this.folder = dir;
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    writeIfChanged(join(dir, 'hooks.mjs'), HOOKS);
    this.preloadPath = join(dir, 'preload.cjs');
    writeIfChanged(this.preloadPath, PRELOAD);
  }

  /** NODE_OPTIONS with the preload first, then what the manifest set (quoted as Node parses NODE_OPTIONS). */
  nodeOptions(existing: string | undefined): string {
    const own = `--require "${this.preloadPath.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    return existing ? `${own} ${existing}` : own;
  }
}

function writeIfChanged(file: string, text: string): void {
  try {
    if (readFileSync(file, 'utf8') === text) return chmodSync(file, 0o644);
  } catch {
    // absent: write it
  }
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o644 });
  chmodSync(temporary, 0o644);
  renameSync(temporary, file);
}
