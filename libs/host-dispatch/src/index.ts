export { Dispatcher, type DispatcherOptions } from './dispatcher';
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
export { ProviderRegistry, type MessageProvider, type ProviderSendResult, type ReplyContext } from './provider';
export { IsoTimeCache } from './iso-time';
export { findCommandConflicts, type CommandConflict, type CommandOwner } from './command-conflicts';
