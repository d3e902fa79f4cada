/**
 * The wire error catalogue: every stable string error code a plugin can meet,
 * in families of one entry format. Codes that travel inside plugin-facing
 * payloads (messages, manifest validation, framing, HTTP plugin answers) are
 * dotted lowercase; local SDK and packer codes are UPPER_SNAKE. Every code has
 * a message that says what is wrong and what to do; docs/protocol/v2.md lists
 * every code of ERROR_CATALOG, SDK_SHARED_ERRORS and PACK_ERRORS, and a test
 * checks the page against the catalogue in both directions. The host's own
 * codes (installer, runtime, HTTP registration, admin API, QQ Bot) are written
 * with defineErrors in @host/host-errors, beside this catalogue, and never
 * reach an SDK.
 */
export interface ErrorInfo {
  /**
   * HTTP status of the answer that carries the code: the admin API's, or a
   * plugin HTTP endpoint's for the codes it answers with.
   */
  readonly status?: number;
  /** What went wrong and what to do next: one or more sentences. */
  readonly message: string;
  /**
   * The usual reasons a user meets the code, and how to tell them apart, for docs/troubleshooting.md (full
   * sentences). Not sent on the wire: the message is what an answer carries.
   */
  readonly causes?: string;
  /** Steps of the fix beyond what the message says (full sentences), for docs/troubleshooting.md. */
  readonly fix?: string;
}

/** `family.what[.more]`: lowercase segments; a segment after the first may be a camelCase field name. */
const DOTTED_CODE = /^[a-z][a-z0-9_]*(\.[a-z][A-Za-z0-9_]*)+$/;
/** `WORD` or `FAMILY_WHAT`. */
const SNAKE_CODE = /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/;

/**
 * Declares one family of error codes. Every family of every package (the
 * protocol's, the SDKs', the CLI's) is written with it, so all share one
 * entry format: a code that is dotted lowercase or UPPER_SNAKE, a message that
 * says what is wrong and the fix, an HTTP status between 400 and 599 where
 * one applies, and optionally the likely causes and longer fix steps that
 * docs/troubleshooting.md shows. It returns the family frozen, with its codes as literal types,
 * so a code type derived from it (`keyof typeof FAMILY`) admits nothing else.
 *
 * @throws Error when an entry breaks the format (at module load, so no test run passes).
 */
export function defineErrors<const T extends Record<string, ErrorInfo>>(family: T): Readonly<T> {
  for (const [code, info] of Object.entries(family)) {
    if (!DOTTED_CODE.test(code) && !SNAKE_CODE.test(code)) {
      throw new Error(`error code "${code}" is neither dotted lowercase (family.what) nor UPPER_SNAKE`);
    }
    if (typeof info?.message !== 'string' || !/^\S[\s\S]*[.)]$/.test(info.message) || info.message.length < 12) {
      throw new Error(`error code "${code}" needs a message of full sentences that says what is wrong and what to do`);
    }
    if (info.status !== undefined && !(Number.isInteger(info.status) && info.status >= 400 && info.status <= 599)) {
      throw new Error(`error code "${code}" has status ${String(info.status)}; use an HTTP error status (400-599) or none`);
    }
    for (const field of ['causes', 'fix'] as const) {
      const text = info[field];
      if (text !== undefined && (typeof text !== 'string' || !/^\S[\s\S]*[.)]$/.test(text)))
        throw new Error(`error code "${code}" has a ${field} that is not full sentences`);
    }
    const extra = Object.keys(info).filter((k) => !['status', 'message', 'causes', 'fix'].includes(k));
    if (extra.length) throw new Error(`error code "${code}" has unknown entry fields ${extra.join(', ')}`);
  }
  return Object.freeze(family);
}

export const MESSAGE_ERRORS = defineErrors({
  'message.empty': { message: 'The message has no content after normalisation. Add a non-empty text, mention, image or file part.' },
  'message.too_long': {
    message: 'The rendered message is longer than the provider allows (4000 characters). Shorten it or split it into several messages.',
  },
  'message.parts.too_many': { message: 'The message has more than 100 parts after normalisation. Merge text or send several messages.' },
  'message.part.unsupported': { message: 'A part has an unknown type. Use text, mention, image, file or composite parts.' },
  'message.part.unsupported_target': {
    message:
      'The provider cannot send this kind of part to this target (QQ Bot: no file parts, and images only to groups and one-to-one chats). Send a link in a text part instead, or send to a target that takes it.',
    causes:
      'A file part to QQ Bot, whose upload endpoint does not take files yet (file_type 4), or an image to a guild channel or direct chat, which the host sends only as text.',
  },
  'message.media.too_many': {
    message: 'The message has more than one image or file part. Send each image or file in a message of its own.',
  },
  'message.media.address_refused': {
    message:
      'The URL of an image or file part, or of a link button, names or resolves to an address the host does not fetch from (loopback, private, link-local or otherwise reserved). Serve the file from a public address.',
    causes:
      "A URL of a service on the plugin's own machine or network (localhost, 10.x, 192.168.x), or a host name that resolves to one; the host refuses it so no plugin can make it or the provider reach its internal network.",
  },
  'message.media.rate_limited': {
    message:
      'The plugin started more media uploads in the last minute than the host allows (20 per plugin). Send fewer images or files, or wait a minute.',
    causes:
      'Image and file parts sent by URL and uploads of bytes (media.upload) are counted apart, each at most 20 per plugin and minute; error.data.retryAfterMilliseconds says when the oldest leaves the minute.',
  },
  'message.media.too_large': {
    message:
      'The upload is larger than the host takes (10 MiB), or a chunk carries more than 512 KiB or more bytes than the upload declared. Send a smaller file, or serve it from a URL.',
    causes:
      'A size declared in media.upload above the limit, a media.chunk whose data decodes to more than 512 KiB, or chunks that add up to more than the declared size.',
  },
  'message.media.type_mismatch': {
    message:
      'The bytes of the upload do not match its declared content type, the content type is not one the host takes for images (PNG, JPEG, GIF or WebP), or an image part names media that is not an image. Declare the type the bytes really have.',
    causes:
      'A file uploaded with the content type of another (a JPEG declared as image/png, a text file declared as an image), an SVG or BMP image, or a media id of a file upload used in an image part.',
    fix: 'Take the content type from the file itself (its first bytes), not from its name; send other kinds of image as a file part, or convert them to PNG.',
  },
  'message.media.unknown': {
    message:
      'The media id or upload id is not known to the host: it was never given to this plugin, its time ran out (media ids live 60 minutes, uploads wait 60 s for their next chunk), or the host restarted. Upload the bytes again.',
    causes:
      "An id kept across a host restart or longer than its lifetime, an id of another plugin's upload (each plugin sees only its own), or an upload id after media.finish or after it was dropped for a refused chunk.",
  },
  'message.media.upload_invalid': {
    message:
      'The chunk does not continue the upload: its offset is not the number of bytes received so far, its data is not base64, another chunk of the upload is still being written, or media.finish came before all declared bytes. Send the chunks in order, one at a time.',
  },
  'message.media.store_full': {
    message:
      'The host keeps as many uploaded bytes as it may (256 MiB for all plugins); the upload is refused until older media expire. Try again later, or send the file from a URL.',
    causes: 'Many or large uploads in the last hour by one or more plugins; uploads under way count with their declared size.',
  },
  'message.media.upload_failed': {
    message:
      'The provider could not fetch or convert the image or file at the URL (QQ Bot: 304082 or 304083, or no file_info). Check that the URL answers with the file to anyone, and that its format is one the provider takes (PNG or JPEG for QQ Bot images).',
  },
  'message.keyboard.too_large': {
    message:
      'The keyboard has more rows or buttons than the provider shows (1 to 5 rows of 1 to 5 buttons). Split the buttons over several messages.',
  },
  'message.keyboard.invalid': {
    message:
      'A button of the keyboard is misshapen (no label, an unknown action, empty callback data, a bad id) or two buttons have the same id. Fix the button the message names; leave ids out to get unique ones.',
  },
  'message.keyboard.unsupported_format': {
    message: 'A keyboard goes only with a Markdown message. Send the message with format "markdown", or without the keyboard.',
  },
  'message.mention.invalid_id': {
    message: 'A user mention has a blank id or one with control characters or markup. Use sender.mentionId from the event.',
    causes: 'An id typed by hand, a display name used as an id, or an id with markup in it.',
    fix: 'Take the id from the event: sender.mentionId, or the mentions of the message.',
  },
  'message.mention.unsupported_target': {
    message:
      'This target does not take this mention: user mentions need a group or channel, and QQ Bot shows an everyone mention only in a guild channel. Remove the mention, or send to a target that takes it.',
    causes:
      'A mention in a one-to-one chat, where there is nobody else to mention, or an everyone mention to a QQ group, where the platform does not show it (only text channels do).',
  },
  'message.mention.unsupported_format': {
    message: 'The provider does not show this mention in this format. Send the message in the other format, or without the mention.',
    causes:
      'Kept for providers whose mentions depend on the format; QQ Bot no longer gives it: an everyone mention there depends on the target (message.mention.unsupported_target).',
  },
  'message.mention.too_many': { message: 'A multi-user mention takes 1 to 20 users. Split the mention or the message.' },
  'message.format.unsupported_target': {
    message: 'Markdown is supported only for group targets. Send text format to this target, or reply in a group.',
    causes: 'Markdown was sent to a one-to-one (c2c), channel or direct chat; the same handler works in a group and fails elsewhere.',
    fix: "Check the conversation type of the event and send text format outside groups (every SDK's scaffold does).",
  },
  'message.target.invalid': { message: 'The target type or id is not valid for this provider. Use a target taken from an event.' },
  'message.target.bot_unknown': {
    message:
      'target.botAccountId names no bot account of this host. Use bot.botAccountId of an event, or ask the operator which accounts are configured.',
    causes: 'The bot account was removed or renamed by the operator, or the plugin sends with an id it made up or kept from another host.',
    fix: 'Send with the bot.botAccountId of an event the plugin received; error.data lists the accounts the host knows.',
  },
  'message.target.bot_required': {
    message:
      'The host has several bot accounts and the message names none. Set target.botAccountId (the SDKs set it to the bot of the event a handler is working on).',
    causes:
      'A send made outside a message handler (a timer, start-up code) or by a plugin built with an SDK older than 2.0.0, on a host with more than one bot account (for example the console bot and a QQ Bot account).',
    fix: 'Send from inside the handler of the event you answer, or keep the bot.botAccountId of an event and pass it as target.botAccountId.',
  },
  'message.reference.expired': {
    message: 'The reply window of this message has passed. Send a new message with messages.send instead.',
    causes:
      "The handler replied after the provider's passive reply window (a slow handler, a queue that held the event), or a scheduled job replies to an old event.",
    fix: 'Reply sooner (ACK at once, do slow work after), or send a new message with messages.send, which needs the messages.send permission.',
  },
  'message.reference.reply_limit': {
    message:
      'The message being answered already has every reply the provider allows (QQ Bot: 5 replies to one received message, counted across all plugins). Put the rest into the replies already sent.',
    causes:
      'Several plugins answer the same message, or one handler replies once per item of a list; the platform refuses the sixth reply (its code 22009, or 40034128 when the window or count is exceeded) and the host refuses it before sending.',
    fix: 'Merge text into fewer replies (one reply may hold up to 4000 characters), or let one plugin answer and the others observe.',
  },
  'message.reference.refused': {
    message:
      'The provider refused to link this reply to the message it answers (QQ Bot: msg_id or event_id not valid for this bot, or an event that takes no reply). Do not repeat the reply.',
    causes:
      'The platform answered 40034024 (msg_id invalid or out of scope), 40034025 (event_id invalid) or 40034027 (the event takes no reply); details.providerCode says which.',
  },
  'message.reference.unavailable': {
    message:
      'The event takes no reply: the provider gave no way to answer it (the bot was removed, or the platform sends nothing to answer). Do not reply to it; messages.send cannot reach the conversation either.',
  },
  'message.reference.unknown': {
    message: 'The eventId was not delivered to this plugin or is too old. Reply only to events you received.',
    causes:
      'The reply names an event the plugin did not receive (an id copied from another event or plugin), or one the host no longer remembers after a restart or a long delay.',
  },
  'message.provider.rate_limited': {
    message:
      'The messaging provider refused the message because a rate limit or quota was reached; details.providerCode is its own code. Send fewer messages, or later (QQ Bot allows 5 replies per received message).',
    causes:
      'QQ Bot allows at most 5 replies to one received message and limits messages per group and per bot; a loop that replies once per item hits it quickly.',
    fix: "Merge replies into fewer messages. error.data.providerCode is the platform's own code, and error.data.retryAfterMilliseconds says when to try again if the platform said so.",
  },
  'message.provider.active_unavailable': {
    message:
      'The provider no longer delivers messages that answer no received message (QQ Bot ended active messages to groups and one-to-one chats on 2025-04-21). Reply to an event instead, within its reply window.',
    causes:
      "messages.send to a QQ group or user without the eventId of a message from that chat, a send after that message's reply window, or the platform answering 40034102 or 40034105 (active message, no permission).",
    fix: 'Send from inside the handler of a message in that chat (the SDKs pass its eventId), or use ctx.reply; a timer cannot start a conversation on QQ any more.',
  },
  'message.provider.rejected': {
    message:
      'The messaging provider refused the message; details.providerCode and details.providerMessage are its own code and text. Check the message against the provider rules.',
  },
  'message.provider.unavailable': {
    message:
      'The messaging provider did not answer, or answered with a server error, also after the retries the host makes when they are safe. Try again later; see the host log.',
  },
  'message.provider.auth_failed': {
    message:
      'The host could not get an access token for the bot account (wrong app id or secret, or the provider refused it). The operator must fix the bot account configuration.',
  },
  'message.permission.denied': {
    message:
      'The plugin did not declare the permission this message needs (messages.reply, messages.send or messages.mentionEveryone). Declare it in manifest.json and reinstall.',
    causes:
      'The manifest lacks messages.reply (replies), messages.send (messages to other conversations) or messages.mentionEveryone (@everyone); or a new version uses a permission the installed manifest does not list.',
    fix: 'Declare the permission in permissions of manifest.json, pack and upload the package again: permissions come from the installed manifest, not from the code.',
  },
});

/** Why one event did not reach one plugin, as recorded in the event log. */
export const DELIVERY_ERRORS = defineErrors({
  'delivery.unavailable': {
    message: 'The plugin was not running when the event arrived. Start it, or check why it stopped in its state reason and log.',
    causes: 'The plugin is stopped, failed after too many crashes, or was restarting when the event arrived.',
    fix: "Open the plugin's state and reason (GET /api/plugins/{pluginId}) and its log; start it again once the cause is fixed.",
  },
  'delivery.queue_full': {
    message:
      'The plugin\'s event queue was full (overflow policy "reject"). Handle events faster or raise concurrency.queueCapacity or maxConcurrentEvents in manifest.json.',
    causes:
      'More events arrive than the plugin handles: a slow handler with maxConcurrentEvents 1, or a burst in a busy group. Only event logs of older hosts show it: this host refuses such an event before accepting it (EVENTS_OVERLOADED), so its sender can send it again.',
    fix: 'Handle events concurrently and raise concurrency.maxConcurrentEvents or queueCapacity, or choose overflowPolicy dropOldest when only recent messages matter.',
  },
  'delivery.dropped': { message: 'The event waited in a full queue and was dropped for a newer one (overflow policy "dropOldest").' },
  'delivery.expired': {
    message:
      "The event waited for the plugin until it could no longer be answered (the provider's reply window, or concurrency.maxWaitMilliseconds) and was never handed to it. Handle events faster or raise concurrency.maxConcurrentEvents in manifest.json.",
    causes:
      'A burst far beyond what the plugin handles in the reply window (5 minutes in QQ groups), a handler that holds its slot until the deadline, or a plugin that was starting or restarting for longer than the window.',
    fix: "See the plugin's waiting events and oldest wait in the admin app (GET /api/plugins/{pluginId}: queue). Handle events concurrently, shorten slow handlers, or set concurrency.maxWaitMilliseconds when only fresh messages matter.",
  },
  'delivery.timeout': {
    message:
      'The plugin did not send its decision (the ACK) within requestTimeoutMilliseconds, so routing moved on and the host cancelled the event. ACK as soon as the plugin knows whether it takes the event; a protocol v2 SDK does this before the handler runs.',
    causes:
      'A plugin that intercepts decides only after slow work, a handler that blocks the thread reading stdin, or a hand-written plugin that ACKs after its handler.',
    fix: 'ACK at once and do the work afterwards, replying with messages.reply; the SDKs ACK before the handler runs unless the plugin intercepts.',
  },
  'delivery.deadline': {
    message:
      'The handler ran longer than its deadline (concurrency.handlerDeadlineMilliseconds, 5 minutes unless set), so the host cancelled it and freed its slot. Make the handler finish sooner, honour its cancellation signal, or raise the deadline in manifest.json.',
    causes: 'A handler waits on a slow service without a timeout, or ignores its cancellation signal.',
  },
  'delivery.interrupted': {
    message:
      'The plugin accepted the event but exited (crash, stop or restart) before reporting its completion. Replies already sent stand; see the plugin log for why it exited.',
    causes: 'The plugin crashed, was stopped or updated, or the host restarted while the handler ran.',
  },
  'delivery.intercept.undeclared': {
    message:
      'The plugin answered intercepted: true without the messages.intercept permission; the host ignored it and delivered to the next plugins. Declare messages.intercept in manifest.json to stop lower-priority plugins.',
  },
  'delivery.failed': { message: 'The event could not be delivered: the plugin exited or its connection closed. See the plugin log.' },
  'delivery.ack.invalid': {
    message:
      'The answer to events.message is not a valid ACK for this event ({eventId, accepted, intercepted, error}). Return the eventId you received.',
    causes: 'A hand-written plugin returns another eventId, or leaves out accepted or intercepted.',
  },
  'delivery.plugin_error': {
    message:
      'The plugin answered events.message with a JSON-RPC error instead of an ACK (Overloaded when every handler was busy). See the error message and the plugin log.',
  },
  'delivery.provider_failed': {
    message:
      'The messaging provider did not accept a message the plugin sent (network or provider error). The plugin got an InternalError; see the host log and the provider status.',
  },
});

export const MANIFEST_ERRORS = defineErrors({
  'manifest.json.invalid': { message: 'manifest.json is not valid JSON. Fix the syntax error at the reported position.' },
  'manifest.json.too_complex': {
    message:
      'The manifest nests arrays and objects deeper than 64 levels, or one array or object has more than 10,000 entries. Flatten it: no valid manifest comes close.',
  },
  'manifest.field.required': {
    message: 'A required field is missing. Add it to manifest.json.',
    causes: 'sdkVersion and eventSubscriptions are often forgotten in a hand-written manifest.',
    fix: 'Add "$schema" pointing at the SDK\'s manifest.schema.json to see every problem in your editor, or run host-plugin validate.',
  },
  'manifest.field.invalid': { message: 'A field has the wrong type or value. Correct it as the message describes.' },
  'manifest.field.unknown': {
    message: 'manifest.json has a field protocol v2 does not define. Remove it or fix its spelling.',
    causes: "A misspelt field (permission instead of permissions), or a field of another host's manifest format.",
  },
  'manifest.protocolVersion.unsupported': { message: 'protocolVersion must be 2. This host loads protocol version 2 plugins only.' },
  'manifest.pluginId.invalid': {
    message: 'pluginId must be a lowercase dotted identifier such as com.example.echo.',
    causes: 'Capitals, spaces or a single word: the id must be dotted lowercase, such as com.example.echo.',
  },
  'manifest.transport.unsupported': {
    message: 'Local packages must use transport "stdio-jsonrpc". HTTP plugins are registered by base URL instead.',
  },
  'manifest.permissions.duplicate': { message: 'A permission is listed twice. List each permission once.' },
  'manifest.permissions.unknown': { message: 'A permission is not one protocol v2 defines. Use a value from the permission list.' },
  'manifest.commands.duplicate': { message: 'Two commands share a name or alias. Command words must be unique, ignoring case.' },
  'manifest.commands.unreachable': { message: 'Commands are declared but the plugin does not subscribe to message.created.' },
  'manifest.settings.invalid': { message: 'A settings.configSchema field is inconsistent. Fix it as the message describes.' },
  'manifest.capabilities.missing': {
    message: 'An HTTP plugin must declare ReceiveMessages (1) and HttpTransport (8): capabilities of at least 9.',
  },
  'manifest.capabilities.unknown': { message: 'capabilities sets bits protocol v2 does not define. Use only 1, 2, 4 and 8.' },
});

export const FRAMING_ERRORS = defineErrors({
  'framing.header.too_long': {
    message: 'A frame header block is longer than 8192 bytes. Send only Content-Length (and optionally Content-Type).',
  },
  'framing.header.malformed': {
    message: 'A header line is not "Name: value". Something other than frames reached stdout; log to stderr instead.',
  },
  'framing.header.duplicate': { message: 'A header appears twice in one frame. Send each header once.' },
  'framing.header.unknown': {
    message: 'A header other than Content-Length or Content-Type was sent. Something else may be writing to stdout.',
  },
  'framing.content_type.unsupported': { message: 'Content-Type must be application/vscode-jsonrpc with charset utf-8, or be left out.' },
  'framing.content_length.missing': { message: 'The frame has no Content-Length header. Every frame starts with Content-Length: N.' },
  'framing.content_length.invalid': { message: 'Content-Length is not a decimal integer. Write the payload length in bytes.' },
  'framing.payload.empty': { message: 'Content-Length is 0. Every frame carries one JSON-RPC message.' },
  'framing.payload.too_large': { message: 'The payload is larger than 4 MiB. Send smaller messages.' },
  'framing.eof_in_frame': { message: 'The stream ended inside a frame. The peer exited or closed stdout while writing.' },
  'framing.utf8.invalid': { message: 'The payload is not valid UTF-8. Encode JSON as UTF-8.' },
  'framing.json.invalid': { message: 'The payload is not valid JSON. Write one JSON object per frame.' },
  'framing.json.too_complex': {
    message:
      'The payload nests arrays and objects deeper than 64 levels, or one array or object has more than 10,000 entries. Send flatter messages; the peer would overflow its stack reading them.',
  },
  'framing.message.invalid': {
    message: 'The payload is not a JSON-RPC 2.0 message. Include "jsonrpc": "2.0" and a method or a result/error.',
  },
});

/**
 * Failures of one delivery to an HTTP plugin. They appear in the delivery
 * outcome and as `lastError` in the plugin's health, never as API statuses.
 */
export const HTTP_DELIVERY_ERRORS = defineErrors({
  'http.timeout': {
    message:
      'The plugin did not answer within its request timeout (10 s unless configured). Answer sooner (work in the background after replying) or raise requestTimeoutMilliseconds for this plugin.',
  },
  'http.unreachable': {
    message:
      'The host could not connect to the plugin service (refused, reset or no route). Check that it runs and that its base URL, port and firewall are right.',
  },
  'http.address_refused': {
    message:
      'The plugin host name now resolves to an address the host address policy refuses. Fix the DNS record, or allow loopback/private addresses in the host configuration.',
  },
  'http.tls': {
    message:
      'The TLS handshake with the plugin failed. Serve a certificate valid for the base URL host, or trust its CA with NODE_EXTRA_CA_CERTS.',
  },
  'http.status': {
    message:
      'The plugin answered with a status other than 200. Answer 200 with a message response for every event you processed, also when accepted is false.',
    causes:
      'The service answered something other than 200 for an event: an exception, a route mismatch behind a proxy, an authentication layer in front of it.',
    fix: 'Answer 200 for every event you processed, with accepted false or error set if needed.',
  },
  'http.signature_rejected': {
    message:
      'The plugin answered 401: it rejected the host signature. Configure it with the signing secret shown at registration and keep its clock in sync (NTP).',
    causes:
      'The service has the wrong secret (it is shown once, at registration), its clock is more than 300 s off, or it computes the HMAC over re-serialised JSON instead of the raw body.',
    fix: 'Give the service the signing secret of the registration, keep both clocks in sync (NTP), and verify the raw body: see docs/protocol/http-signing.md.',
  },
  'http.response.invalid': {
    message:
      'The plugin response is not a valid message response (accepted, intercepted, outboundMessages, error). details.issues lists each field and the fix.',
    causes:
      'The response lacks one of accepted, intercepted, outboundMessages or error (use null for no error), or an outbound message is malformed.',
  },
  'http.response.too_large': { message: 'The plugin response is larger than 1 MiB. Send fewer or shorter outbound messages.' },
  'http.response.too_complex': {
    message:
      'The plugin response nests arrays and objects deeper than 64 levels, or one array or object has more than 10,000 entries. Answer a plain message response.',
  },
  'http.circuit_open': {
    message:
      'Deliveries to this plugin failed 5 times in a row, so the host stopped calling it and probes it again after 30 s. Fix the plugin; its health shows the last error.',
    causes: '5 deliveries in a row failed; the host now probes every 30 s instead of delivering.',
    fix: 'Fix the service; the plugin recovers by itself at the next successful probe.',
  },
  'http.outbound.send_not_allowed': {
    message:
      'An outbound message targets another conversation, which needs the SendMessages capability (2). Declare it in the manifest, or leave out target to reply.',
    causes: 'A message targets another conversation without the SendMessages capability (2).',
    fix: 'Leave out target to reply, or declare the capability and messages.send.',
  },
  'http.intercept.not_allowed': {
    message:
      'The plugin answered intercepted: true without the InterceptMessages capability (4); the host ignored it. Declare the capability to stop lower-priority plugins.',
    causes: 'intercepted: true from a service that did not declare the InterceptMessages capability (4).',
  },
});

/**
 * Why a plugin's HTTP endpoint refuses a request as not signed by the host:
 * it answers 401 with `{"error": {code, message}}` (docs/protocol/http-signing.md).
 * The host records the answer as `http.signature_rejected`.
 */
export const SIGNATURE_ERRORS = defineErrors({
  'signature.missing': {
    status: 401,
    message:
      'A signature header (x-host-timestamp, x-host-delivery-id or x-host-signature) is missing. Only requests signed by the host are processed; check that a proxy does not strip the headers.',
  },
  'signature.malformed': {
    status: 401,
    message:
      'The signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>). Check that a proxy does not rewrite them.',
  },
  'signature.expired': {
    status: 401,
    message:
      'The request timestamp is outside the tolerance (5 minutes unless configured). Keep the clocks of the host and the plugin in sync with NTP.',
  },
  'signature.invalid': {
    status: 401,
    message:
      'No signature matches the body. Configure the plugin with the signing secret shown when it was registered, and verify the raw body before any parser changes it.',
  },
  'signature.replayed': {
    status: 401,
    message: 'This delivery id was already received within the tolerance window, so the request is refused as a replay.',
  },
  'signature.secret_unset': {
    status: 401,
    message:
      'The plugin has no signing secret yet, so it cannot check that the host sent the request. Register the plugin, then give it the secret shown at registration (the SDKs read it lazily, for example from a file).',
  },
});

/**
 * What a plugin's HTTP endpoint answers, as `{"error": {code, message,
 * details?}}` with the status, when it does not process a request for another
 * reason. Every SDK's HTTP handler answers with these codes; the host records
 * the answer as `http.status`.
 */
export const PLUGIN_HTTP_ERRORS = defineErrors({
  'http.not_found': {
    status: 404,
    message: 'The path is neither the manifest nor the message events path. Register the base URL the plugin serves them under.',
  },
  'http.method_not_allowed': {
    status: 405,
    message: 'The method does not fit the path: GET or HEAD for the manifest, POST for message events (the Allow header says which).',
  },
  'http.body_too_large': {
    status: 413,
    message: 'The request body is larger than the plugin accepts. Raise its body limit (4 MiB unless configured).',
  },
  'http.overloaded': {
    status: 503,
    message: 'The plugin is handling as many events as it allows, or is shutting down. The host retries after Retry-After.',
  },
  'event.invalid': {
    status: 400,
    message:
      'The signed body is not JSON or not a message event; details.issues lists each field. Check that host and plugin speak protocol v2.',
  },
  'plugin.id_mismatch': {
    status: 400,
    message: 'The x-host-plugin-id header names another plugin than the one this service is. Register the base URL of the right plugin.',
  },
  'plugin.start_failed': {
    status: 503,
    message:
      'The plugin failed to start (its start hook threw), so it takes no events. See the plugin log, fix the cause and restart the service.',
  },
  'plugin.internal_error': { status: 500, message: 'The plugin failed unexpectedly while answering. See the plugin log.' },
});

/** Codes an SDK reports as the `error` of an event (ACK, completion or HTTP response) for the plugin. */
export const HANDLER_ERRORS = defineErrors({
  'plugin.handler_failed': {
    message:
      'The plugin handler threw an error that carries no code of its own; the message is the error text. See the plugin log, or throw a HandlerError with your own code.',
  },
});

/**
 * Where a document that fails validation comes from, of those a plugin or an SDK meets. Its field issues
 * get codes `<domain>.field.required`, `<domain>.field.invalid` and `<domain>.field.unknown` (see
 * toValidationIssues); the manifest's are part of MANIFEST_ERRORS, the others of FIELD_ISSUE_ERRORS. The
 * host's own request bodies (the admin and console APIs) are validated the same way, with domains and codes
 * of the host's catalogue (@host/host-errors).
 */
export const VALIDATION_DOMAINS = {
  manifest: 'manifest.json or an HTTP plugin manifest',
  settings: 'the settings values of a plugin',
  response: 'the message response of an HTTP plugin',
  params: 'the params of a JSON-RPC request',
  initialize: 'the answer to host.initialize',
  event: 'a message event a plugin received',
  message: 'an outgoing message',
} as const;

/** The domains of FIELD_ISSUE_ERRORS: all but the manifest's, whose field issues are MANIFEST_ERRORS. */
const FIELD_ISSUE_DOMAINS = (({ manifest: _manifest, ...others }) => others)(VALIDATION_DOMAINS);

export type ValidationDomain = keyof typeof VALIDATION_DOMAINS;
export type FieldIssueKind = 'required' | 'invalid' | 'unknown';
export type FieldIssueCode<D extends string> = `${D}.field.${FieldIssueKind}`;

/**
 * The three field issue codes of each domain, with their entries, from a map of domain to what it
 * validates ("an admin API request body"): the one wording of field issues, for the wire's domains here
 * and the host's own in @host/host-errors. Pass the result to defineErrors.
 */
export function fieldIssueFamily<const D extends string>(
  domains: Readonly<Record<D, string>>,
): { readonly [C in FieldIssueCode<D>]: ErrorInfo } {
  const entries: [string, ErrorInfo][] = (Object.entries(domains) as [D, string][]).flatMap(([d, what]) => {
    return [
      [`${d}.field.required`, { message: `A required field of ${what} is missing. Add the field the issue's path names.` }],
      [`${d}.field.invalid`, { message: `A field of ${what} has the wrong type or value. Correct it as the issue's message describes.` }],
      [
        `${d}.field.unknown`,
        { message: `${what[0]!.toUpperCase()}${what.slice(1)} has a field that is not defined. Remove it or fix its spelling.` },
      ],
    ];
  });
  return Object.fromEntries(entries) as { readonly [C in FieldIssueCode<D>]: ErrorInfo };
}

/** Field issue codes of the wire's validated documents other than manifests, built from VALIDATION_DOMAINS. */
export const FIELD_ISSUE_ERRORS = defineErrors(fieldIssueFamily(FIELD_ISSUE_DOMAINS));

/**
 * What a packer reports when it refuses to write a plugin package, or warns about one: the same codes from
 * every packer (`host-plugin pack`, `python3 -m host_sdk_v2.pack`, Go's `cmd/host-pack`, the C# SDK's
 * MSBuild targets and HostSdk.Pack), so a failure reads the same whatever language the plugin is written in.
 * They never cross the wire (a packer runs on the author's machine), so they are not in ERROR_CATALOG; they
 * are published in catalog/pack-error-codes.json, and the SDK code generator gives every language the
 * constants. A packer prints `error CODE: what happened` with the message as the fix. A check that only
 * one language's packer can make still has its code here, and the message says which packer it is about.
 */
export const PACK_ERRORS = defineErrors({
  PACK_USAGE: {
    message:
      "The packer's command line is not valid. Run it with --help (`host-plugin pack --help`, `python3 -m host_sdk_v2.pack --help`, `go run plugin-host.dev/sdk-go/v2/cmd/host-pack -h`).",
  },
  PACK_MANIFEST_MISSING: {
    message:
      'No manifest.json in the project folder. Run the packer in the plugin project (or pass its folder), or create one with `host-plugin init`.',
    causes: 'The packer ran in another folder than the project, or the C# project sets HostPluginManifest to a file that does not exist.',
  },
  PACK_MANIFEST_INVALID: {
    message:
      'manifest.json is not valid JSON or does not follow protocol v2. Fix each listed field; `host-plugin validate` lists them all.',
    causes: 'A field is missing or has the wrong type, the file is not JSON (a trailing comma, a comment), or it is larger than 1 MiB.',
  },
  PACK_TRANSPORT_NOT_STDIO: {
    message:
      'manifest.json describes an HTTP plugin. Only stdio plugins are uploaded as a package; register an HTTP plugin by its base URL (POST /api/plugins/http) instead.',
  },
  PACK_HOST_STDIO_MISSING: {
    message:
      'transport.stdio.args lacks --host-stdio, so the plugin would print help and exit instead of speaking the protocol. Add "--host-stdio" to args.',
    causes:
      'The Node.js and Python packers keep the start command as written. The Go and C# packers write the start command themselves and always add the flag, so they never report this code.',
  },
  PACK_ENTRY_MISSING: {
    message:
      'The program the start command runs is not in the project (the built script, the Python script, the Go main package, or the published .NET assembly). Build or publish first, or fix transport.stdio.',
    causes:
      'Node.js: dist/ was not built (npm run build). Python: args names another script. Go: -pkg names a folder without Go files. C#: the publish folder lacks <AssemblyName>.dll, .deps.json or .runtimeconfig.json.',
  },
  PACK_ENTRY_SOURCE_ONLY: {
    message:
      'The start command runs source code (TypeScript) instead of the built JavaScript. Point transport.stdio.args at the build output, e.g. dist/index.js.',
  },
  PACK_COMMAND_UNSUPPORTED: {
    message:
      'The start command is not one this packer can find the entry of (the Node.js packer needs "command": "node" with the built script in args). Use the packer of the language the plugin is written in.',
  },
  PACK_ABSOLUTE_PATH: {
    message: 'A path in transport.stdio is absolute, so the package only works on this machine. Use a path relative to the package.',
  },
  PACK_WORKDIR_OUTSIDE: { message: 'transport.stdio.workingDirectory leaves the package. Use "." or a folder inside the package.' },
  PACK_WORKDIR_MISSING: {
    message: 'transport.stdio.workingDirectory names a folder that does not exist in the project. Create it (build first) or use ".".',
  },
  PACK_INCLUDE_INVALID: {
    message:
      'An extra file to include is not a file or folder inside the project, or would replace a file the packer writes. Pass a relative path of an existing file.',
  },
  PACK_PACKAGE_JSON_MISSING: {
    message: 'No readable package.json in the project folder. A Node.js plugin needs one (npm init, or host-plugin init).',
  },
  PACK_SDK_NOT_A_DEPENDENCY: {
    message:
      '@host/plugin-sdk-v2 is not in "dependencies" of package.json, so it would not be packed. Move it there (npm install @host/plugin-sdk-v2).',
  },
  PACK_SDK_NOT_INSTALLED: { message: '@host/plugin-sdk-v2 is not installed in node_modules. Run npm install.' },
  PACK_SDK_NOT_BUILT: {
    message:
      'The installed @host/plugin-sdk-v2 has no built files (a linked SDK checkout that was not built). Build the SDK, then pack again.',
  },
  PACK_SDK_VERSION_MISMATCH: {
    message:
      '(A warning.) manifest.json sdkVersion differs from the version of the SDK the package carries. Set sdkVersion to the packed SDK version.',
  },
  PACK_DEPENDENCY_UNRESOLVED: {
    message:
      'A dependency the plugin needs is not installed or cannot be loaded from the package. Install it (npm install, requirements.txt, go get, dotnet restore) and pack again.',
    causes:
      'Node.js: a production dependency is not in node_modules. Python: a module pip installed does not import from the package (a compiled module built for another system, or a dependency of it missing). Go: a module of go.mod cannot be found (no network, no go.sum entry, a wrong replace path). C#: an assembly .deps.json names is missing from the publish folder.',
  },
  PACK_DEPENDENCY_INSTALL_FAILED: {
    message:
      "The packer could not install the plugin's dependencies into the package (pip install -r requirements.txt failed). Read the installer's output shown with the error; pass index options with --pip-arg.",
  },
  PACK_TOOL_MISSING: {
    message:
      'A tool the packer runs is not installed: pip for the dependencies of a Python plugin, the go command for a Go plugin, or the HostSdk packer of the C# package. Install it (Debian: apt-get install python3-pip; golang-1.23-go; restore the HostSdk package again).',
  },
  PACK_BUILD_FAILED: {
    message: 'The plugin did not compile. Fix the errors the compiler printed (shown with the error) and pack again.',
  },
  PACK_START_FAILED: {
    message: "The staged package did not answer the host's handshake. Run it with --host-stdio and read its stderr (shown with the error).",
    causes:
      'The plugin raises while it loads, prints something other than protocol frames to stdout, or waits for input before it reads the handshake.',
  },
  PACK_PLATFORM_UNSUPPORTED: {
    message:
      'The target platform is not one the host runs plugins on. Choose linux, windows or darwin with amd64, arm64 or 386 (osx, x64, arm64, x86 in the manifest).',
  },
  PACK_PROJECT_NOT_EXECUTABLE: {
    message: 'A plugin package needs an executable project; this one builds a library. Set <OutputType>Exe</OutputType>.',
  },
  PACK_PUBLISH_SELF_CONTAINED: {
    message:
      'The package launches `dotnet <AssemblyName>.dll`, so it must be published framework-dependent. Set <SelfContained>false</SelfContained>.',
  },
  PACK_LINK_SKIPPED: {
    message:
      '(A warning.) A dependency contains symbolic links; they are left out because the host refuses links in a package. Make sure the plugin does not need them.',
  },
  PACK_FILE_TOO_LARGE: { message: 'A file is larger than a ZIP without ZIP64 can hold (4 GiB). Leave it out of the package.' },
  PACK_OUTPUT_NOT_WRITABLE: {
    message:
      "The package file could not be written: the output folder cannot be created or written, or a folder has the archive's name. Choose another --out folder or fix its permissions.",
  },
});

export type PackErrorCode = keyof typeof PACK_ERRORS;

/**
 * Every family of ERROR_CATALOG by name, in the order the spec lists them:
 * what catalog/error-codes.json (and so every SDK's generated catalogue) and
 * the tables of docs/protocol/v2.md section 11.3 are generated from. These are
 * the wire families: codes a plugin can meet in a message, an answer, an
 * event's outcome or its own HTTP endpoint. The host's own codes (installer,
 * runtime, HTTP registration, admin API, QQ Bot) are in @host/host-errors.
 */
export const ERROR_FAMILIES = {
  MESSAGE_ERRORS,
  DELIVERY_ERRORS,
  MANIFEST_ERRORS,
  FIELD_ISSUE_ERRORS,
  FRAMING_ERRORS,
  HTTP_DELIVERY_ERRORS,
  SIGNATURE_ERRORS,
  PLUGIN_HTTP_ERRORS,
  HANDLER_ERRORS,
} as const;

/** Every code of the wire families, with its entry. */
export const ERROR_CATALOG = {
  ...MESSAGE_ERRORS,
  ...DELIVERY_ERRORS,
  ...MANIFEST_ERRORS,
  ...FIELD_ISSUE_ERRORS,
  ...FRAMING_ERRORS,
  ...HTTP_DELIVERY_ERRORS,
  ...SIGNATURE_ERRORS,
  ...PLUGIN_HTTP_ERRORS,
  ...HANDLER_ERRORS,
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOG;
export type MessageErrorCode = keyof typeof MESSAGE_ERRORS;
export type FramingErrorCode = keyof typeof FRAMING_ERRORS;
export type DeliveryErrorCode = keyof typeof DELIVERY_ERRORS;
export type ManifestErrorCode = keyof typeof MANIFEST_ERRORS;
export type FieldIssueErrorCode = keyof typeof FIELD_ISSUE_ERRORS;
export type HttpDeliveryErrorCode = keyof typeof HTTP_DELIVERY_ERRORS;
export type SignatureErrorCode = keyof typeof SIGNATURE_ERRORS;
export type PluginHttpErrorCode = keyof typeof PLUGIN_HTTP_ERRORS;
export type HandlerErrorCode = keyof typeof HANDLER_ERRORS;
/** A code a validation issue may carry: a field issue of some domain, or a manifest code. */
export type IssueCode = FieldIssueCode<ValidationDomain> | ManifestErrorCode;

export function errorInfo(code: ErrorCode): ErrorInfo {
  return ERROR_CATALOG[code];
}

/** True for a code of ERROR_CATALOG (for codes read from data, e.g. a custom zod issue's `params.code`). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CATALOG, code);
}
