// First, for its side effect: reserves stdout for frames in protocol mode
// before the plugin's own code can print.
import './protocol-guard';

export { readManifest } from './read-manifest';
export { definePlugin, type ManifestSource, type Plugin, type PluginDefinition, type PluginManifest } from './define-plugin';
export type {
  GroupSender,
  LifecycleContext,
  LogLevel,
  MessageContext,
  MessageHandler,
  MessageSender,
  MediaUploadOptions,
  PluginDirectories,
  PluginLogger,
  TextSender,
  TransportKind,
  UploadedMedia,
} from './context';
export { at, composite, literal, text, type MentionableUser, type PartInput } from './parts';
export {
  image,
  file,
  keyboard,
  callbackButton,
  linkButton,
  commandButton,
  KeyboardBuilder,
  type EventContext,
  type InteractionContext,
  type InteractionHandler,
  type ChatEventHandler,
} from './rich';
export { HandlerError, HostCallError, PluginMessageError, PluginSdkError, SDK_ERRORS, type SdkErrorCode } from './errors';
export { HANDLER_FAILED_CODE } from './dispatch';
export { runStdio, USAGE_EXIT_CODE, type StdioOptions } from './stdio/runtime';
export { HOST_STDIO_FLAG } from './stdio/protocol-mode';
export { SDK_NAME, SDK_VERSION } from './version';
export { RpcErrorCode } from '@host/protocol';
export type {
  Attachment,
  Button,
  ButtonAction,
  ChatEvent,
  CommandMatch,
  Conversation,
  FilePart,
  ImagePart,
  Interaction,
  Keyboard,
  EventAck,
  HttpManifest,
  MessageErrorCode,
  MessageEvent,
  MessageFormat,
  MessagePart,
  MessageReference,
  Permission,
  PluginError,
  SendResult,
  StdioManifest,
  Target,
  TextPart,
  UserMentionPart,
  EveryoneMentionPart,
  CompositePart,
  UserRef,
} from '@host/protocol';
