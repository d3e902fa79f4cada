import { defineErrors } from './error-codes';

/**
 * Local error codes every protocol v2 SDK (Node.js, Python, Go, C#) raises
 * for mistakes in how a plugin uses it or for conditions of its own process.
 * They never cross the wire, so they are not in ERROR_CATALOG; they are
 * published in catalog/sdk-error-codes.json so every SDK uses the same codes
 * with the same meaning. The messages name the Node.js API where an SDK's own
 * names differ; each SDK's guide restates them in its own names, and an SDK
 * keeps codes only it has in a family of its own, written with defineErrors
 * (the Node.js SDK's NODE_HTTP_ERRORS, for example).
 */
export const SDK_SHARED_ERRORS = defineErrors({
  SDK_DEFINITION_INVALID: {
    message: 'The plugin definition (definePlugin() in Node.js) is invalid. The message names the field and the fix.',
    causes:
      "A command of the manifest without a handler (and no message handler), a handler for a command the manifest lacks, or an alias used where the command's name belongs.",
  },
  SDK_MANIFEST_INVALID: {
    message:
      'The manifest given to the SDK does not follow protocol v2. The message lists each field; run `host-plugin validate` for details.',
  },
  SDK_INTERCEPT_UNDECLARED: {
    message:
      'The handler called intercept, but the plugin definition does not declare that it intercepts (`intercepts: true` in Node.js), so the HTTP manifest lacks InterceptMessages. Declare it.',
  },
  SDK_INTERCEPT_PERMISSION_MISSING: {
    message:
      'A plugin that intercepts runs over stdio only with the `messages.intercept` permission: add it to "permissions" in manifest.json.',
    causes: 'The plugin is defined to intercept, but manifest.json lacks messages.intercept.',
  },
  SDK_DECISION_CONFLICT: {
    message: "The event's decision was already made: intercept and pass cannot both be called for one event. Decide once.",
  },
  SDK_EVENT_CANCELLED: {
    message:
      "The event's handler was cancelled (the host sent events.cancel, or its handler deadline passed); the handler's cancellation signal carries this reason. Stop the work and return.",
    causes: 'The operator or the host cancelled the event, the handler deadline passed, or the plugin is stopping.',
  },
  SDK_OUTBOUND_LIMIT: { message: 'An HTTP response carries at most 20 outbound messages. Merge replies into fewer messages.' },
  SDK_SEND_UNAVAILABLE: {
    message:
      'This transport cannot deliver the message now: an HTTP plugin sends only while it handles an event (the messages go back in the response).',
  },
  SDK_UPLOAD_UNAVAILABLE: {
    message:
      'This transport cannot upload media: an HTTP plugin does not call the host, so it sends images and files by URL. Serve the file from a public URL, or upload from a stdio plugin.',
  },
  SDK_HOST_DISCONNECTED: {
    message: 'The connection to the host closed before the request finished. The host stopped or restarted the plugin.',
  },
  SDK_NOT_INITIALIZED: {
    message: 'The host has not initialized the plugin yet. Send messages from handlers or the start hook, not while the plugin loads.',
  },
  SDK_HTTP_CONFIG_INVALID: {
    message: 'The HTTP transport (createHttpHandler() in Node.js) was given invalid options. The message names the option and the fix.',
  },
});

export type SdkSharedErrorCode = keyof typeof SDK_SHARED_ERRORS;
