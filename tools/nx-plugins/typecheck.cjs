// Nx plugin: infers each project's `typecheck` target from its TypeScript
// configurations, so no project.json spells the command out. Every
// tsconfig.json, tsconfig.spec.json and tsconfig.node.json beside a
// project.json is checked with `tsc --noEmit` (build-only configurations such
// as tsconfig.build.json are covered by tsconfig.json and left out).
'use strict';
const { existsSync, readdirSync } = require('node:fs');
const { dirname, join } = require('node:path');

const CHECKED = /^tsconfig(\.(spec|node))?\.json$/;

/** @type {import('nx/src/project-graph/plugins').CreateNodes} */
const createNodes = [
  '**/tsconfig.json',
  (configFiles, _options, context) =>
    configFiles.flatMap((file) => {
      const root = dirname(file);
      const abs = join(context.workspaceRoot, root);
      if (!existsSync(join(abs, 'project.json'))) return [];
      const configs = readdirSync(abs)
        .filter((name) => CHECKED.test(name))
        .sort();
      return [
        [
          file,
          {
            projects: {
              [root]: {
                targets: {
                  typecheck: {
                    executor: 'nx:run-commands',
                    options: { cwd: root, command: configs.map((c) => `tsc -p ${c} --noEmit`).join(' && ') },
                    cache: true,
                    inputs: ['default', '^default', '{workspaceRoot}/tsconfig.base.json', { externalDependencies: ['typescript'] }],
                    outputs: [],
                    metadata: { description: `Type-checks ${configs.join(', ')} without emitting.` },
                  },
                },
              },
            },
          },
        ],
      ];
    }),
];

module.exports = { name: 'workspace-typecheck', createNodes };
