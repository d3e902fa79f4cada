#!/usr/bin/env node
// Checks how eslint.config.mjs finds browser-safe projects, on a throwaway
// workspace: projects under libs/ and apps/ with their tags, and a lint of
// in-memory files through the workspace's own browser-import rules. Runs as
// its own process for the same reason as lint-probe.mjs (an ES module
// config). Input on stdin: {"projects": [{"path", "tags"}], "probes":
// [{"filePath", "code"}]}; output on stdout: {"sources": [...], "results":
// [{"filePath", "messages": [{ruleId, severity, message}]}]}.
import { ESLint } from 'eslint';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import tseslint from 'typescript-eslint';
import { browserImportRules, browserProjectSources } from '../../../eslint.config.mjs';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { projects, probes } = JSON.parse(input);
const root = mkdtempSync(join(tmpdir(), 'browser-rule-probe-'));
try {
  for (const p of projects) {
    mkdirSync(join(root, p.path, 'src'), { recursive: true });
    writeFileSync(join(root, p.path, 'project.json'), JSON.stringify({ name: p.path.split('/').pop(), tags: p.tags }));
  }
  const sources = browserProjectSources(pathToFileURL(`${root}/`));
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts', '**/*.tsx'], languageOptions: { parser: tseslint.parser } }, ...browserImportRules(sources)],
  });
  const results = [];
  for (const probe of probes) {
    const [result] = await eslint.lintText(probe.code, { filePath: join(root, probe.filePath) });
    results.push({
      filePath: probe.filePath,
      messages: (result?.messages ?? []).map(({ ruleId, severity, message }) => ({ ruleId, severity, message })),
    });
  }
  process.stdout.write(JSON.stringify({ sources, results }));
} finally {
  rmSync(root, { recursive: true, force: true });
}
