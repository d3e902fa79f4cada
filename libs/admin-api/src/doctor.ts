import { z } from 'zod';

/** One check of a conformance report (docs/protocol/v2.md, section 14). */
export const DoctorCheckSchema = z.object({
  id: z.string().describe('The check id from libs/protocol/conformance/checks.json, or installer.package.'),
  title: z.string(),
  status: z.enum(['pass', 'fail', 'skip']).describe('skip: the check cannot apply to this plugin (seen says why); it does not fail it.'),
  required: z.boolean(),
  seen: z.array(z.string()).describe('What the suite saw: the failures, what passed, or why it was skipped.'),
  fix: z.string(),
  docs: z.string().describe('The section of the protocol spec that states the rule.'),
});

/** The result of running the conformance suite against an installed stdio plugin. */
export const DoctorReportSchema = z.object({
  plugin: z.object({ pluginId: z.string().nullable(), name: z.string().nullable(), version: z.string().nullable() }),
  source: z.string().describe('What was checked: the installed package folder, relative to the data folder.'),
  passed: z.boolean().describe('True when no required check failed.'),
  startedAt: z.string(),
  durationMs: z.number(),
  checks: z.array(DoctorCheckSchema),
  counts: z.object({ passed: z.number(), failed: z.number(), skipped: z.number() }),
  isolation: z
    .string()
    .optional()
    .describe(
      "How the suite's plugin processes were isolated: the same summary as the plugin's runtime.isolation.summary (the host runs them as it runs the plugin).",
    ),
});
export type DoctorReport = z.infer<typeof DoctorReportSchema>;

export const DoctorResponseSchema = z.object({ report: DoctorReportSchema });
export const LastDoctorResponseSchema = z.object({
  report: DoctorReportSchema.nullable().describe(
    'The last stored result, or null when the suite never ran for the installed package (an update or a reinstall starts afresh).',
  ),
});
