export { runConformance, playScenarios, type ConformanceOptions } from './suite';
export { buildReport, renderReport, Outcomes, INSTALLER_CHECK, type CheckResult, type CheckStatus, type ConformanceReport } from './report';
export { prepareFolder, preparePackageFile, type PreparedPlugin } from './target';
export { checkInstalled, type InstalledPluginJob } from './installed';
export type { RunIsolation } from './plugin-run';
export { checkInstalledInSeparateProcess } from './worker';
export { reapDoctorLeftovers } from './leftovers';
