#!/usr/bin/env node
// Lints source texts that exist only in memory, with the workspace's real
// ESLint configuration, through the ESLint Node API. Runs as its own process
// because eslint.config.mjs is an ES module, which Jest's module sandbox
// cannot import. Input on stdin: [{"filePath", "code"}], paths relative to the
// workspace root; output on stdout: [{"filePath", "messages": [{ruleId,
// severity, message}]}].
import { ESLint } from 'eslint';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
let input = '';
for await (const chunk of process.stdin) input += chunk;
const probes = JSON.parse(input);
const eslint = new ESLint({ cwd: root });
const out = [];
for (const probe of probes) {
  const filePath = resolve(root, probe.filePath);
  if (await eslint.isPathIgnored(filePath)) throw new Error(`${probe.filePath} is ignored by the ESLint configuration`);
  const [result] = await eslint.lintText(probe.code, { filePath });
  out.push({
    filePath: probe.filePath,
    messages: (result?.messages ?? []).map(({ ruleId, severity, message }) => ({ ruleId, severity, message })),
  });
}
process.stdout.write(JSON.stringify(out));
