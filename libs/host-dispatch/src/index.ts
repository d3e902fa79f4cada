export { Dispatcher, type DispatcherOptions } from './dispatcher';
export { EventLog, type EventLogOptions, type EventLogUpdate, type EventRecord, type DeliveryRecord, type OutboundRecord } from './event-log';
export { HostOutboundSink, MAX_OUTBOUND_PER_EVENT, type OutboundSinkOptions } from './outbound-sink';
export { ProviderRegistry, type MessageProvider, type ProviderSendResult, type ReplyContext } from './provider';
export { PluginQueue, DEFAULT_CONCURRENCY } from './plugin-queue';
export { matchCommand, type MatchedCommand } from './command-matcher';
export { selectRecipients, isSubscribed, type Recipient } from './routing';
export { IsoTimeCache } from './iso-time';
