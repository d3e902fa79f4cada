export { runConformance, playScenarios, type ConformanceOptions } from './suite';
export { buildReport, renderReport, Outcomes, INSTALLER_CHECK, type CheckResult, type CheckStatus, type ConformanceReport } from './report';
export { prepareFolder, preparePackageFile, type PreparedPlugin } from './target';
export { checkInstalled, type InstalledPluginJob } from './installed';
export { checkInstalledInSeparateProcess } from './worker';
export { reapDoctorLeftovers } from './leftovers';
