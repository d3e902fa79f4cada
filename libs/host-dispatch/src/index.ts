export {
  Dispatcher,
  DEFAULT_MAX_WAITING_EVENTS,
  type Admission,
  type DispatcherOptions,
  type PluginQueueStats,
  type Refusal,
  type Taking,
} from './dispatcher';
export { type QueueStats } from './plugin-queue';
export { RefusalLog } from './refusal-log';
export {
  EventLog,
  type EventLogOptions,
  type EventLogUpdate,
  type EventRecord,
  type DeliveryRecord,
  type DeliveryState,
  type CompletionRecord,
  type OutboundRecord,
} from './event-log';
export { ReplyReferences, type ReplyReference, type ReplyReferencesOptions, type ReplyLookup } from './reply-references';
export { ProviderRegistry } from './provider';
export { IsoTimeCache } from './iso-time';
export { findCommandConflicts, type CommandConflict, type CommandOwner } from './command-conflicts';
