using System.Text.Json;
using HostSdk.Wire;
using Microsoft.Extensions.Logging;

namespace HostSdk;

/// <summary>
/// Writes log lines to the host's plugin log (log.write), or to stderr before the handshake. It is an
/// <see cref="ILogger"/>: <c>ctx.Log.LogInformation("saw {User}", name)</c> sends the formatted message with the
/// template's values as fields (as strings), and an exception's type and message. A handler's logger
/// (<c>ctx.Log</c> of an event) names the handler's event in every line, so the host shows the line with that event;
/// the plugin's own (OnStart, OnStop, a timer) names none.
/// </summary>
public sealed class PluginLogger : ILogger
{
    private readonly Action<string, string, IReadOnlyDictionary<string, JsonElement>?, string?> _write;

    internal PluginLogger(Action<string, string, IReadOnlyDictionary<string, JsonElement>?> write) : this((level, message, fields, _) => write(level, message, fields), null) { }

    internal PluginLogger(Action<string, string, IReadOnlyDictionary<string, JsonElement>?, string?> write) : this(write, null) { }

    private PluginLogger(Action<string, string, IReadOnlyDictionary<string, JsonElement>?, string?> write, string? eventId)
    {
        _write = write;
        EventId = eventId;
    }

    /// <summary>The event whose handler this logger belongs to (log.write eventId); null for the plugin's own logger.</summary>
    public string? EventId { get; }

    /// <summary>The same log, with every line naming <paramref name="eventId"/>.</summary>
    internal PluginLogger ForEvent(string eventId) => new(_write, eventId);

    public void Debug(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("debug", message, fields, EventId);
    public void Info(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("info", message, fields, EventId);
    public void Warn(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("warn", message, fields, EventId);
    public void Error(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("error", message, fields, EventId);

    public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

    public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (!IsEnabled(logLevel)) return;
        var level = logLevel switch
        {
            LogLevel.Trace or LogLevel.Debug => "debug",
            LogLevel.Information => "info",
            LogLevel.Warning => "warn",
            _ => "error",
        };
        var message = formatter(state, exception);
        if (exception != null) message += $" ({exception.GetType().Name}: {exception.Message})";
        Dictionary<string, JsonElement>? fields = null;
        if (state is IEnumerable<KeyValuePair<string, object?>> values)
        {
            foreach (var (key, value) in values)
            {
                if (key == "{OriginalFormat}") continue;
                fields ??= new Dictionary<string, JsonElement>(StringComparer.Ordinal);
                fields[key] = StringElement(Convert.ToString(value, System.Globalization.CultureInfo.InvariantCulture) ?? "");
            }
        }
        _write(level, message, fields, EventId);
    }

    private static JsonElement StringElement(string text)
    {
        var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer)) w.WriteStringValue(text);
        using var doc = JsonDocument.Parse(buffer.ToArray());
        return doc.RootElement.Clone();
    }
}

/// <summary>What a context needs of the transport it runs on (the stdio runtime, or one HTTP event).</summary>
internal interface IPluginTransport
{
    HostInitializeParamsDirectories Directories { get; }
    PluginLogger Logger { get; }
    /// <summary>messages.reply of event <paramref name="eventId"/>, to where <paramref name="reference"/> says; <paramref name="cancellationToken"/> aborts the wait for the host's answer.</summary>
    Task<SendResult> ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken);
    /// <summary>messages.send; <paramref name="eventId"/> is the handler's event (null outside a message handler).</summary>
    Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken);
    /// <summary>media.upload, media.chunk and media.finish; a transport that cannot call the host (HTTP) refuses.</summary>
    Task<MediaFinishResult> UploadMediaAsync(byte[] data, string contentType, string? fileName, CancellationToken cancellationToken) =>
        throw new PluginSdkException(Catalog.ErrSdkUploadUnavailable,
            "an HTTP plugin does not call the host, so it cannot upload; send the image or file by URL (Parts.ImageFromUrl, Parts.FileFromUrl)");
}

/// <summary>What every handler gets: settings, directories, logging, sends and a CancellationToken.</summary>
public class PluginContext
{
    private protected readonly IPluginTransport Runtime;

    internal PluginContext(IPluginTransport runtime, Settings settings, CancellationToken cancellationToken)
    {
        Runtime = runtime;
        Settings = settings;
        CancellationToken = cancellationToken;
    }

    /// <summary>Cancelled when the plugin stops, and for a message handler also on events.cancel and at the handler deadline.</summary>
    public CancellationToken CancellationToken { get; }

    public Settings Settings { get; }

    /// <summary>The plugin's directories as host.initialize gave them.</summary>
    public HostInitializeParamsDirectories Directories => Runtime.Directories;

    private PluginLogger? _log;

    /// <summary>The plugin's log; in an event's handler, every line names that event.</summary>
    public PluginLogger Log => _log ??= HandlerEventId is { } eventId ? Runtime.Logger.ForEvent(eventId) : Runtime.Logger;

    /// <summary>
    /// Sends a plain-text message to a target (messages.send; needs the messages.send permission). In a message handler a
    /// target without <c>BotAccountId</c> is sent by the bot that received the event; outside one, a host with several
    /// bots needs it (message.target.bot_required).
    /// </summary>
    public Task<SendResult> SendAsync(Target target, params MessagePart[] parts) => SendAsync(target, parts, default(CancellationToken));

    /// <summary>
    /// Sends a plain-text message to a target, as <see cref="SendAsync(Target, MessagePart[])"/>. Cancelling
    /// <paramref name="cancellationToken"/> (or the handler's own <see cref="CancellationToken"/>) while the host has not
    /// answered aborts the wait with <see cref="OperationCanceledException"/>.
    /// </summary>
    public Task<SendResult> SendAsync(Target target, MessagePart[] parts, CancellationToken cancellationToken = default) =>
        WithCancellation(cancellationToken, ct => Runtime.SendAsync(Route(target), "text", parts, HandlerEventId, ct));

    /// <summary>Sends a Markdown message to a target (the bot as for <see cref="SendAsync(Target, MessagePart[])"/>).</summary>
    public Task<SendResult> SendMarkdownAsync(Target target, params MessagePart[] parts) => SendMarkdownAsync(target, parts, default(CancellationToken));

    /// <summary>Sends a Markdown message to a target; <paramref name="cancellationToken"/> as for <see cref="SendAsync(Target, MessagePart[], System.Threading.CancellationToken)"/>.</summary>
    public Task<SendResult> SendMarkdownAsync(Target target, MessagePart[] parts, CancellationToken cancellationToken = default) =>
        WithCancellation(cancellationToken, ct => Runtime.SendAsync(Route(target), "markdown", parts, HandlerEventId, ct));

    /// <summary>
    /// Uploads bytes to the host for an image or file part (docs/protocol/v2.md 4.12): stdio only, with the
    /// <c>media.upload</c> permission. The SDK sends them in chunks of the size the host names (media.upload, media.chunk,
    /// media.finish), each after the answer to the one before, and stops between chunks when
    /// <paramref name="cancellationToken"/> is cancelled. The host takes at most 10 MiB an upload and 20 uploads a minute,
    /// images as PNG, JPEG, GIF or WebP whose first bytes match <paramref name="contentType"/>, and keeps the id for an
    /// hour. Put the answer in a part with <see cref="Parts.ImageFromMedia"/> or <see cref="Parts.FileFromMedia"/>:
    /// <code>
    /// var chart = await ctx.UploadMediaAsync(png, "image/png");
    /// await ctx.ReplyAsync(Parts.Text("today: "), Parts.ImageFromMedia(chart, alt: "a chart"));
    /// </code>
    /// Before anything is sent it throws <see cref="MessageException"/> without the permission
    /// (<c>message.permission.denied</c>), for no bytes (<c>message.media.upload_invalid</c>) or over the limit
    /// (<c>message.media.too_large</c>); over HTTP <see cref="PluginSdkException"/> <c>SDK_UPLOAD_UNAVAILABLE</c>. The
    /// host's refusals are a <see cref="MessageException"/> with <c>FromHost</c> and a <c>message.media.*</c> code.
    /// </summary>
    public Task<MediaFinishResult> UploadMediaAsync(byte[] data, string contentType, string? fileName = null, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(data);
        ArgumentNullException.ThrowIfNull(contentType);
        return WithCancellation(cancellationToken, ct => Runtime.UploadMediaAsync(data, contentType, fileName, ct));
    }

    /// <summary>
    /// Runs a call to the host with <paramref name="cancellationToken"/> linked with the handler's own token, so that
    /// either one aborts the wait for the host's answer. A handler whose own token was cancelled before the call (it
    /// caught the cancellation and sends a last reply) is not aborted by it: that call is bounded by the request
    /// timeout and by <paramref name="cancellationToken"/> only.
    /// </summary>
    private protected Task<T> WithCancellation<T>(CancellationToken cancellationToken, Func<CancellationToken, Task<T>> call)
    {
        if (cancellationToken.IsCancellationRequested) return Task.FromCanceled<T>(cancellationToken);
        var own = CancellationToken;
        if (!own.CanBeCanceled || own.IsCancellationRequested) return call(cancellationToken);
        if (!cancellationToken.CanBeCanceled) return call(own);
        return Linked(own, cancellationToken, call);

        static async Task<T> Linked(CancellationToken own, CancellationToken caller, Func<CancellationToken, Task<T>> call)
        {
            using var linked = CancellationTokenSource.CreateLinkedTokenSource(own, caller);
            return await call(linked.Token).ConfigureAwait(false);
        }
    }

    /// <summary>The target a send goes to (protocol v2 4.7): as given outside a message handler.</summary>
    private protected virtual Target Route(Target target) => target;

    /// <summary>The event a send names as its handler's (messages.send eventId, protocol v2 4.7): none outside a message handler.</summary>
    private protected virtual string? HandlerEventId => null;
}

/// <summary>
/// The decision of one event (docs/protocol/v2.md 4.2, 5.3, 6.4): taken once, by the handler of a plugin that
/// intercepts (<see cref="MessageContext.Intercept"/>, <see cref="MessageContext.Pass"/>), otherwise by the runtime
/// before the handler runs. <c>onDecided</c> sends it (the stdio ACK); the HTTP transport reads it at the end.
/// </summary>
internal sealed class EventDecision(string eventId, bool intercepts, Action<bool>? onDecided = null)
{
    private readonly object _gate = new();
    private bool? _intercepted;

    public bool Intercepts { get; } = intercepts;

    /// <summary>True once the decision was taken (and sent, on stdio).</summary>
    public bool Decided
    {
        get { lock (_gate) return _intercepted.HasValue; }
    }

    public bool Intercepted
    {
        get { lock (_gate) return _intercepted ?? false; }
    }

    /// <summary>The handler's decision; the same one again is a no-op, the other one is SDK_DECISION_CONFLICT.</summary>
    public void Decide(bool intercepted)
    {
        if (intercepted && !Intercepts)
            throw new PluginSdkException(Catalog.ErrSdkInterceptUndeclared,
                $"the handler of event {eventId} called Intercept(), but the plugin does not declare that it intercepts; call .Intercepts() on the PluginBuilder and declare \"{Catalog.PermissionMessagesIntercept}\" in manifest.json");
        if (!intercepted && !Intercepts) return; // a plugin that cannot intercept passed when it was admitted
        lock (_gate)
        {
            if (_intercepted == intercepted) return;
            if (_intercepted.HasValue)
                throw new PluginSdkException(Catalog.ErrSdkDecisionConflict,
                    $"{(intercepted ? "Intercept()" : "Pass()")} was called after {(_intercepted.Value ? "Intercept()" : "Pass()")} for event {eventId}; decide once");
            _intercepted = intercepted;
        }
        onDecided?.Invoke(intercepted);
    }

    /// <summary>Takes the decision if nobody has (the runtime: at admission, or when the handler ends); false when it was taken already.</summary>
    public bool TrySettle(bool intercepted)
    {
        lock (_gate)
        {
            if (_intercepted.HasValue) return false;
            _intercepted = intercepted;
        }
        onDecided?.Invoke(intercepted);
        return true;
    }

    /// <summary>Marks the event declined (the handler failed before deciding; the caller sends the decline); false when it was decided already.</summary>
    public bool TrySettleDeclined()
    {
        lock (_gate)
        {
            if (_intercepted.HasValue) return false;
            _intercepted = false;
        }
        return true;
    }
}

/// <summary>What a message or command handler gets: the event, replies, and everything of <see cref="PluginContext"/>.</summary>
public sealed class MessageContext : PluginContext
{
    private readonly EventDecision _decision;

    internal MessageContext(IPluginTransport runtime, Settings settings, MessageEvent messageEvent, CancellationToken cancellationToken, EventDecision decision)
        : base(runtime, settings, cancellationToken)
    {
        Event = messageEvent;
        _decision = decision;
    }

    /// <summary>
    /// Stops the plugins after this one from getting the message (docs/protocol/v2.md 6.4). Needs
    /// <see cref="PluginBuilder.Intercepts"/> (and, over stdio, the <c>messages.intercept</c> permission in manifest.json);
    /// without it this throws <see cref="PluginSdkException"/> <c>SDK_INTERCEPT_UNDECLARED</c>. Over stdio the decision
    /// goes to the host at once, so call it as early as the handler knows, before slow work.
    /// </summary>
    public void Intercept() => _decision.Decide(true);

    /// <summary>
    /// Lets the message go on to the plugins after this one, as early as the handler knows it (a plugin that intercepts
    /// holds them up until it decides; the end of its handler passes). A no-op for a plugin that does not intercept.
    /// Calling it after <see cref="Intercept"/> (or the reverse) throws <c>SDK_DECISION_CONFLICT</c>.
    /// </summary>
    public void Pass() => _decision.Decide(false);

    /// <summary>True when this handler intercepted the message.</summary>
    public bool Intercepted => _decision.Intercepted;

    /// <summary>The message event exactly as the host sent it.</summary>
    public MessageEvent Event { get; }

    /// <summary>The message of the event (its id, text and mentions).</summary>
    public MessageEventMessage Message => Event.Message;

    /// <summary>The message's text, as the user wrote it (<c>Event.Message.Content</c>); for a command, <see cref="Args"/> is the part after the command word.</summary>
    public string Text => Event.Message.Content;

    /// <summary>The user who wrote the message.</summary>
    public UserRef Sender => Event.Sender;

    /// <summary>The matched command, or null for a plain message.</summary>
    public CommandMatch? Command => Event.Command;

    /// <summary>The text after the matched command word, leading whitespace removed, as the host matched it (command.args); "" for a plain message.</summary>
    public string Args => Event.Command?.Args ?? "";

    /// <summary>Replies in plain text where the message came from.</summary>
    public Task<SendResult> ReplyAsync(params MessagePart[] parts) => ReplyAsync(parts, default(CancellationToken));

    /// <summary>
    /// Replies in plain text where the message came from. Cancelling <paramref name="cancellationToken"/> (or the
    /// handler's own <see cref="PluginContext.CancellationToken"/>) while the host has not answered aborts the wait with
    /// <see cref="OperationCanceledException"/>.
    /// </summary>
    public Task<SendResult> ReplyAsync(MessagePart[] parts, CancellationToken cancellationToken = default) =>
        WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, Event.MessageReference, "text", parts, null, ct));

    /// <summary>Replies in Markdown (needed for an everyone mention).</summary>
    public Task<SendResult> ReplyMarkdownAsync(params MessagePart[] parts) => ReplyMarkdownAsync(parts, default(CancellationToken));

    /// <summary>Replies in Markdown; <paramref name="cancellationToken"/> as for <see cref="ReplyAsync(MessagePart[], System.Threading.CancellationToken)"/>.</summary>
    public Task<SendResult> ReplyMarkdownAsync(MessagePart[] parts, CancellationToken cancellationToken = default) =>
        WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, Event.MessageReference, "markdown", parts, null, ct));

    /// <summary>Replies in Markdown with <paramref name="keyboard"/> (<see cref="Keyboard.Of"/>) under the message; a click on a callback button comes back to <see cref="PluginBuilder.OnInteraction"/>.</summary>
    public Task<SendResult> ReplyMarkdownAsync(MessagePart[] parts, Keyboard keyboard, CancellationToken cancellationToken = default) =>
        WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, Event.MessageReference, "markdown", parts, keyboard, ct));

    /// <summary>A send from this handler speaks as the bot that received the event unless the target names one.</summary>
    private protected override Target Route(Target target) =>
        target is { BotAccountId: null } ? target with { BotAccountId = Event.Bot.BotAccountId } : target;

    /// <summary>A send from this handler names its event, so the host ties it to this handling.</summary>
    private protected override string? HandlerEventId => Event.EventId;
}

/// <summary>
/// What the handlers of interaction.created, bot.added, bot.removed and conversation.opened get (docs/protocol/v2.md 5.4):
/// the event, replies in its conversation, the decision, and everything of <see cref="PluginContext"/>; no command or
/// message accessors.
/// </summary>
public sealed class EventContext : PluginContext
{
    private readonly EventDecision _decision;

    internal EventContext(IPluginTransport runtime, Settings settings, ChatEvent chatEvent, CancellationToken cancellationToken, EventDecision decision)
        : base(runtime, settings, cancellationToken)
    {
        Event = chatEvent;
        _decision = decision;
    }

    /// <summary>The event exactly as the host sent it.</summary>
    public ChatEvent Event { get; }

    /// <summary>"interaction.created", "bot.added", "bot.removed" or "conversation.opened".</summary>
    public string EventType => Event.EventType;

    /// <summary>Who clicked, added or removed the bot, or opened the conversation; null when the provider does not say (a click always has one).</summary>
    public UserRef? Sender => Event.Sender;

    /// <summary>The click of an interaction.created event, else null.</summary>
    public Interaction? Interaction => Event.Interaction;

    /// <summary>The callback data of the clicked button ("" for other event types).</summary>
    public string Data => Event.Interaction?.Data ?? "";

    /// <summary>True when the event says where a reply goes (messageReference): always for a click, never for bot.removed.</summary>
    public bool CanReply => Event.MessageReference != null;

    /// <summary>Stops the event from reaching the plugins after this one (needs <see cref="PluginBuilder.Intercepts"/>).</summary>
    public void Intercept() => _decision.Decide(true);

    /// <summary>Lets the event go on to the plugins after this one, as early as the handler knows it.</summary>
    public void Pass() => _decision.Decide(false);

    /// <summary>Replies in plain text in the event's conversation; an event without a messageReference (bot.removed) throws message.reference.unavailable.</summary>
    public Task<SendResult> ReplyAsync(params MessagePart[] parts) => ReplyAsync(parts, default(CancellationToken));

    /// <summary>Replies in plain text in the event's conversation; cancelling <paramref name="cancellationToken"/> (or the handler's own token) while the host has not answered aborts the wait with <see cref="OperationCanceledException"/>.</summary>
    public Task<SendResult> ReplyAsync(MessagePart[] parts, CancellationToken cancellationToken = default)
    {
        var reference = Reference();
        return WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, reference, "text", parts, null, ct));
    }

    /// <summary>Replies in Markdown (groups only).</summary>
    public Task<SendResult> ReplyMarkdownAsync(params MessagePart[] parts) => ReplyMarkdownAsync(parts, default(CancellationToken));

    /// <summary>Replies in Markdown (groups only); <paramref name="cancellationToken"/> as for <see cref="ReplyAsync(MessagePart[], System.Threading.CancellationToken)"/>.</summary>
    public Task<SendResult> ReplyMarkdownAsync(MessagePart[] parts, CancellationToken cancellationToken = default)
    {
        var reference = Reference();
        return WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, reference, "markdown", parts, null, ct));
    }

    /// <summary>Replies in Markdown with <paramref name="keyboard"/> under the message.</summary>
    public Task<SendResult> ReplyMarkdownAsync(MessagePart[] parts, Keyboard keyboard, CancellationToken cancellationToken = default)
    {
        var reference = Reference();
        return WithCancellation(cancellationToken, ct => Runtime.ReplyAsync(Event.EventId, reference, "markdown", parts, keyboard, ct));
    }

    private MessageReference Reference() => Event.MessageReference ?? throw MessageException.Of(Catalog.CodeMessageReferenceUnavailable, null,
        $"the {Event.EventType} event {Event.EventId} takes no reply (it has no messageReference); do not reply to it");

    private protected override Target Route(Target target) =>
        target is { BotAccountId: null } ? target with { BotAccountId = Event.Bot.BotAccountId } : target;

    private protected override string? HandlerEventId => Event.EventId;
}
