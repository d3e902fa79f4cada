export { StdioPluginRuntime, RUNTIME_FOLDER, type StdioRuntimeOptions } from './stdio-runtime';
export { Supervisor } from './supervisor';
export { DEFAULT_TIMINGS, restartDelay, type RuntimeTimings } from './timings';
export { DEFAULT_LIMITS, type RuntimeLimits } from './limits';
export { BootGuard, BOOT_GUARD_FILE, type BootDecision, type BootGuardOptions } from './boot-guard';
export { LogRateLimiter, DEFAULT_LOG_RATE, type LogRate } from './logs/log-rate-limit';
export { FilePluginLogStore, LOG_FILE_NAME, type FileLogStoreOptions, type LogListener } from './logs/file-plugin-log-store';
export { LineSplitter, capLogLine } from './logs/line-limits';
export { FramedMessageReader, type FramingFailure } from './connection/framed-reader';
export { FramedMessageWriter, DEFAULT_MAX_UNREAD_BYTES, type WriterLimits } from './connection/framed-writer';
export { RequestBacklog, DEFAULT_BACKLOG_LIMITS, type BacklogLimits } from './connection/request-backlog';
export { buildEnvironment, resolveLaunch, INHERITED_ENVIRONMENT, type PluginDirectories } from './process/launch';
export { ModuleContainment, MODULE_CONTAINMENT_FOLDER, OUTSIDE_PACKAGE_CODE } from './process/module-containment';
export { ProcessGroups, signalGroup, groupAlive, markedProcesses, RUN_MARKER_VARIABLE } from './process/process-groups';
export { LocalProcessRunner, type LaunchSpec, type ProcessRunner, type RunningProcess } from './process/runner';
export { StartError, type ExitInfo } from './process/plugin-process';
export { initializeParams, checkInitializeResult } from './process/handshake';
export { createPluginRequestHandler, type PluginRequestContext } from './connection/plugin-requests';
export { IsolatingProcessRunner, type IsolatingRunnerOptions } from './isolation/isolating-runner';
export {
  probeIsolation,
  strongestMode,
  describeSupport,
  portableSupport,
  restoreSupport,
  type IsolationSupport,
  type PortableIsolationSupport,
} from './isolation/probe';
export { PluginUids, PLUGIN_UIDS_FILE } from './isolation/plugin-uids';
export {
  DEFAULT_ISOLATION,
  DEFAULT_PLUGIN_LIMITS,
  DEFAULT_UID_RANGE,
  parseUidRange,
  type IsolationMode,
  type IsolationRequest,
  type IsolationSettings,
  type IsolationStatus,
  type PluginResourceLimits,
  type UidRange,
} from './isolation/settings';
