#!/usr/bin/env node
'use strict';
// The command npm links at install time. It lives outside dist/ so the link
// exists in a fresh checkout before the CLI is built; the CLI itself is the
// bundled dist/cli.cjs.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '..', 'dist', 'cli.cjs');
if (!existsSync(cli)) {
  process.stderr.write(
    'host-plugin is not built yet.\n' +
      '  fix: in the repository run `npx nx run host-plugin:build` (or `npx nx run-many -t build -p plugin-sdk host-plugin`), then run the command again.\n',
  );
  process.exit(1);
}
require(cli);
