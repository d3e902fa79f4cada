export { ConsoleProvider, type ConsoleChatEventInput, type ConsoleMessageInput, type ConsoleProviderOptions } from './console-provider';
export {
  createConsoleRouter,
  consoleRoutes,
  ConsoleMessageRequestSchema,
  toConsoleResponse,
  summarize,
  type ConsoleRouterOptions,
  type ConsoleMessageRequest,
  type ConsoleMessageResponse,
} from './console-router';
export { consoleMediaRoutes, consoleMediaUrl } from './media-route';
export { SseStream, DEFAULT_SSE_MAX_BUFFERED_BYTES, type SseStreamOptions } from './sse-stream';
