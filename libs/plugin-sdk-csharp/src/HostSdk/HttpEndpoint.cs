using System.Diagnostics;
using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk.Http;

/// <summary>An answer of the HTTP transport: status, JSON body and extra headers (Allow, Retry-After).</summary>
public sealed record HttpAnswer(int Status, byte[] Body, IReadOnlyDictionary<string, string> Headers)
{
    public const string ContentType = "application/json; charset=utf-8";
}

/// <summary>How a plugin is served over HTTP.</summary>
public sealed class HttpPluginOptions
{
    /// <summary>The signing secrets to accept (required): <see cref="HostSecrets.FromFile"/> or <see cref="HostSecrets.Static"/>.</summary>
    public Func<IReadOnlyList<string>>? Secrets { get; set; }

    /// <summary>The plugin's manifest.json; the HTTP manifest is derived from it (default "manifest.json").</summary>
    public string ManifestPath { get; set; } = "manifest.json";

    /// <summary>Allowed clock difference of signed requests (default 300 s).</summary>
    public TimeSpan Tolerance { get; set; } = TimeSpan.FromSeconds(Catalog.HttpDefaultSignatureToleranceSeconds);

    /// <summary>The largest request body accepted (default 4 MiB); a larger one is answered 413.</summary>
    public long MaxBodyBytes { get; set; } = Catalog.LimitMaxPayloadBytes;

    /// <summary>Events handled at once; beyond it the answer is 503 with Retry-After (default 64; 0 means no limit).</summary>
    public int MaxConcurrentEvents { get; set; } = 64;

    /// <summary>A handler's token is cancelled after this long (default: the runtime's handler deadline).</summary>
    public TimeSpan HandlerDeadline { get; set; } = TimeSpan.FromMilliseconds(Catalog.RuntimeDefaultHandlerDeadlineMilliseconds);

    /// <summary>Also require a valid signature on the manifest GET (default false: the first fetch cannot be verified).</summary>
    public bool VerifyManifestRequests { get; set; }

    /// <summary>When set, ctx.Directories: this folder as the data directory, with config/ and cache/ inside.</summary>
    public string? DataDirectory { get; set; }

    /// <summary>The settings handlers see; the manifest's defaults fill the gaps.</summary>
    public IReadOnlyDictionary<string, JsonElement>? Settings { get; set; }

    /// <summary>Receives ctx.Log lines and the endpoint's own (default: one line each on stderr).</summary>
    public Action<string, string>? Log { get; set; }

    /// <summary>The clock (tests set it).</summary>
    public Func<DateTimeOffset> Now { get; set; } = () => DateTimeOffset.UtcNow;
}

/// <summary>
/// The HTTP transport of a plugin (docs/protocol/v2.md section 8), independent of any web server: it answers the
/// manifest GET and signed message events with <see cref="HttpAnswer"/>s. HostSdk.AspNetCore maps it onto ASP.NET
/// Core endpoints; another server can call it the same way. OnStart runs at construction, in the background, and
/// events wait for it; <see cref="DisposeAsync"/> refuses new events, cancels running handlers, waits and runs OnStop.
/// </summary>
public sealed class HttpPluginEndpoint : IAsyncDisposable
{
    private readonly Plugin _plugin;
    private readonly HttpPluginOptions _options;
    private readonly byte[] _manifest;
    private readonly ReplayGuard _replay = new();
    private readonly CancellationTokenSource _root = new();
    private readonly Task _started;
    private readonly Settings _settings;
    private readonly HostInitializeParamsDirectories? _directories;
    private readonly PluginLogger _logger;
    private readonly Action<string, string> _log;
    private readonly object _lock = new();
    private int _inFlight;
    private bool _closed;
    private TaskCompletionSource? _idle;
    private Exception? _startError;

    public HttpPluginEndpoint(Plugin plugin, HttpPluginOptions options)
    {
        _plugin = plugin;
        _options = options;
        if (options.Secrets is null)
            throw Config("HttpPluginOptions.Secrets is required, for example HostSecrets.FromFile(\"signing-secret.txt\")");
        if (options.MaxBodyBytes <= 0 || options.Tolerance <= TimeSpan.Zero || options.MaxConcurrentEvents < 0 || options.HandlerDeadline <= TimeSpan.Zero)
            throw Config("MaxBodyBytes, Tolerance and HandlerDeadline must be positive and MaxConcurrentEvents at least 0");
        var manifest = LoadManifest(options.ManifestPath);
        if (manifest.PluginId != plugin.PluginId)
            throw Config($"{options.ManifestPath} is plugin \"{manifest.PluginId}\" but the plugin is \"{plugin.PluginId}\"; use the same pluginId");
        Manifest = ToHttpManifest(manifest, plugin.Intercepts);
        _manifest = JsonSerializer.SerializeToUtf8Bytes(Manifest, WireJsonContext.Default.HttpManifest);
        var settings = new Dictionary<string, JsonElement>(StringComparer.Ordinal);
        foreach (var (key, field) in manifest.Settings?.ConfigSchema ?? new Dictionary<string, ConfigField>())
            if (field.DefaultValue is { } d) settings[key] = d;
        foreach (var (key, value) in options.Settings ?? new Dictionary<string, JsonElement>()) settings[key] = value;
        _settings = new Settings(settings);
        if (options.DataDirectory is { } data)
        {
            var full = Path.GetFullPath(data);
            _directories = new HostInitializeParamsDirectories
            {
                PluginDirectory = Directory.GetCurrentDirectory(),
                PluginDataDirectory = full,
                PluginConfigDirectory = Path.Combine(full, "config"),
                PluginCacheDirectory = Path.Combine(full, "cache"),
            };
            Directory.CreateDirectory(_directories.PluginConfigDirectory);
            Directory.CreateDirectory(_directories.PluginCacheDirectory);
        }
        var stderrLock = new object();
        _log = options.Log ?? ((level, message) =>
        {
            lock (stderrLock) Console.Error.WriteLine($"[{level}] {message}");
        });
        _logger = new PluginLogger((level, message, fields) =>
            _log(level, fields is { Count: > 0 } ? $"{message} {JsonSerializer.Serialize(fields, WireJsonContext.Default.IReadOnlyDictionaryStringJsonElement)}" : message));
        _started = Task.Run(StartAsync);
    }

    /// <summary>The manifest the endpoint serves, derived from manifest.json.</summary>
    public HttpManifest Manifest { get; }

    /// <summary>The largest request body a server should read before answering <see cref="BodyTooLarge"/>.</summary>
    public long MaxBodyBytes => _options.MaxBodyBytes;

    private static InvalidOperationException Config(string message) => new(Catalog.ErrSdkHttpConfigInvalid + ": " + message);

    private static StdioManifest LoadManifest(string path)
    {
        try
        {
            var info = new FileInfo(path);
            if (!info.Exists) throw Config($"{Path.GetFullPath(path)} does not exist; an HTTP plugin serves a manifest derived from its manifest.json (HttpPluginOptions.ManifestPath)");
            if (info.Length > Catalog.LimitMaxPayloadBytes) throw Config($"{path} is larger than {Catalog.LimitMaxPayloadBytes} bytes");
            return JsonSerializer.Deserialize(File.ReadAllBytes(path), WireJsonContext.Default.StdioManifest) ?? throw Config($"{path} is null");
        }
        catch (JsonException e)
        {
            throw Config($"{path} is not a valid manifest: {e.Message}");
        }
    }

    /// <summary>
    /// The HTTP manifest of a stdio manifest: capabilities from its permissions, without messages.intercept (an HTTP
    /// plugin declares interception as the InterceptMessages capability, set when <paramref name="intercepts"/>).
    /// </summary>
    public static HttpManifest ToHttpManifest(StdioManifest m, bool intercepts = false)
    {
        var permissions = (m.Permissions ?? []).Where(p => p != Catalog.PermissionMessagesIntercept).ToList();
        long capabilities = Catalog.CapabilityReceiveMessages | Catalog.CapabilityHttpTransport;
        if (intercepts) capabilities |= Catalog.CapabilityInterceptMessages;
        if (permissions.Contains(Catalog.PermissionMessagesSend)) capabilities |= Catalog.CapabilitySendMessages;
        return new HttpManifest
        {
            PluginId = m.PluginId,
            Name = m.Name,
            Version = m.Version,
            Author = m.Author,
            Description = m.Description,
            ProtocolVersion = Catalog.ProtocolVersion,
            SdkVersion = Plugin.SdkVersion,
            Capabilities = capabilities,
            EventSubscriptions = m.EventSubscriptions,
            Permissions = permissions,
            Commands = m.Commands ?? [],
            Settings = m.Settings is { } s ? new HttpManifestSettings { ConfigSchema = s.ConfigSchema } : null,
        };
    }

    private async Task StartAsync()
    {
        if (_plugin.OnStart is not { } onStart) return;
        try
        {
            await onStart(new PluginContext(new LifecycleTransport(this), _settings, _root.Token)).ConfigureAwait(false);
        }
        catch (Exception e)
        {
            _startError = e;
            _log("error", $"OnStart failed: {e.GetType().Name}: {e.Message}");
        }
    }

    /// <summary>GET (or HEAD) {base}/host/plugin/manifest. <paramref name="header"/> looks a request header up by name.</summary>
    public HttpAnswer GetManifest(Func<string, string?> header)
    {
        if (_options.VerifyManifestRequests)
        {
            var secrets = _options.Secrets!();
            if (secrets.Count == 0) return Error(Catalog.CodeSignatureSecretUnset, "no signing secret is configured yet");
            var check = HostSignature.Verify(header(Catalog.HttpHeaderTimestamp), header(Catalog.HttpHeaderDeliveryId), header(Catalog.HttpHeaderSignature),
                [], secrets, _options.Tolerance, _options.Now());
            if (!check.IsValid) return Error(check.Code!, check.Message);
        }
        return new HttpAnswer(200, _manifest, NoHeaders);
    }

    /// <summary>The answer to a body larger than <see cref="MaxBodyBytes"/> (413), given before the body is read further.</summary>
    public HttpAnswer BodyTooLarge() => Error(Catalog.CodeHttpBodyTooLarge, $"the request body is larger than {_options.MaxBodyBytes} bytes");

    /// <summary>The answer to a path that is neither endpoint (404).</summary>
    public static HttpAnswer NotFound(string path) =>
        Error(Catalog.CodeHttpNotFound, $"{path} is neither {Catalog.HttpPathManifest}, {Catalog.HttpPathMessageEvents} nor {Catalog.HttpPathOtherEvents}");

    /// <summary>The answer to a method the path does not take (405 with Allow).</summary>
    public static HttpAnswer MethodNotAllowed(string path, string allow) =>
        Error(Catalog.CodeHttpMethodNotAllowed, $"use {allow.Replace(", ", " or ")} for {path}", new Dictionary<string, string> { ["Allow"] = allow });

    /// <summary>
    /// POST {base}/host/plugin/events/message with the raw body as received: verifies the signature, refuses replays,
    /// runs the handler and answers the message response (the decision and completion at once). The handler's token is
    /// cancelled when <paramref name="requestAborted"/> is (the host closed the request), at the deadline, and on dispose.
    /// </summary>
    public Task<HttpAnswer> PostEventAsync(Func<string, string?> header, ReadOnlyMemory<byte> body, CancellationToken requestAborted = default) =>
        PostAsync(header, body, other: false, requestAborted);

    /// <summary>
    /// POST {base}/host/plugin/events/deliver: an event of another type (interaction.created, bot.added, bot.removed,
    /// conversation.opened), checked and answered like <see cref="PostEventAsync"/>; a type without a handler is declined.
    /// </summary>
    public Task<HttpAnswer> PostOtherEventAsync(Func<string, string?> header, ReadOnlyMemory<byte> body, CancellationToken requestAborted = default) =>
        PostAsync(header, body, other: true, requestAborted);

    private async Task<HttpAnswer> PostAsync(Func<string, string?> header, ReadOnlyMemory<byte> body, bool other, CancellationToken requestAborted)
    {
        if (body.Length > _options.MaxBodyBytes) return BodyTooLarge();
        var secrets = _options.Secrets!();
        if (secrets.Count == 0) return Error(Catalog.CodeSignatureSecretUnset, "no signing secret is configured yet");
        var now = _options.Now();
        var check = HostSignature.Verify(header(Catalog.HttpHeaderTimestamp), header(Catalog.HttpHeaderDeliveryId), header(Catalog.HttpHeaderSignature),
            body.Span, secrets, _options.Tolerance, now);
        if (!check.IsValid) return Error(check.Code!, check.Message);
        if (header(Catalog.HttpHeaderPluginId) is { Length: > 0 } claimed && claimed != _plugin.PluginId)
            return Error(Catalog.CodePluginIdMismatch, $"this service is plugin \"{_plugin.PluginId}\" but the host sent an event for \"{claimed}\"; register the right base URL");
        lock (_lock)
        {
            if (_closed) return Error(Catalog.CodeHttpOverloaded, "the plugin is shutting down", RetryAfter);
            // Answered before the delivery id is recorded, so the host's retry is not a replay.
            if (_options.MaxConcurrentEvents > 0 && _inFlight >= _options.MaxConcurrentEvents)
                return Error(Catalog.CodeHttpOverloaded, $"the plugin is handling {_inFlight} events (its limit); retry later", RetryAfter);
            _inFlight++;
        }
        try
        {
            var expires = DateTimeOffset.FromUnixTimeSeconds(check.Timestamp) + _options.Tolerance + TimeSpan.FromSeconds(1);
            if (!_replay.Remember(check.DeliveryId, expires, now))
                return Error(Catalog.CodeSignatureReplayed, $"delivery {check.DeliveryId} was already received; a replayed request is refused");
            if (other)
            {
                ChatEvent? chat;
                try
                {
                    chat = JsonSerializer.Deserialize(body.Span, WireJsonContext.Default.ChatEvent);
                }
                catch (JsonException ex)
                {
                    return Error(Catalog.CodeEventInvalid, "the body is not an event of another type: " + ex.Message, issues: [(ex.Path ?? "", ex.Message)]);
                }
                if (chat is null) return Error(Catalog.CodeEventInvalid, "the body is not an event", issues: [("", "the body is null")]);
                if (EventRunner.CheckChatEvent(chat) is { } chatFault)
                    return Error(Catalog.CodeEventInvalid, "the body is not an event of another type: " + chatFault.Message, issues: [chatFault]);
                await _started.ConfigureAwait(false);
                if (_startError is not null)
                    return Error(Catalog.CodePluginStartFailed, "the plugin failed to start (OnStart threw); see its log");
                return new HttpAnswer(200, Encode(await ProcessChatAsync(chat, requestAborted).ConfigureAwait(false)), NoHeaders);
            }
            MessageEvent? e;
            try
            {
                e = JsonSerializer.Deserialize(body.Span, WireJsonContext.Default.MessageEvent);
            }
            catch (JsonException ex)
            {
                return Error(Catalog.CodeEventInvalid, "the body is not a message event: " + ex.Message,
                    issues: [(ex.Path ?? "", ex.Message)]);
            }
            if (e is null) return Error(Catalog.CodeEventInvalid, "the body is not a message event", issues: [("", "the body is null")]);
            if (EventRunner.CheckEvent(e) is { } fault) return Error(Catalog.CodeEventInvalid, "the body is not a message event: " + fault.Message, issues: [fault]);
            await _started.ConfigureAwait(false);
            if (_startError is not null)
                return Error(Catalog.CodePluginStartFailed, "the plugin failed to start (OnStart threw); see its log");
            var response = await ProcessAsync(e, requestAborted).ConfigureAwait(false);
            return new HttpAnswer(200, Encode(response), NoHeaders);
        }
        finally
        {
            lock (_lock)
            {
                _inFlight--;
                if (_inFlight == 0) _idle?.TrySetResult();
            }
        }
    }

    /// <summary>The response body: "error" is required even when null, which the wire context leaves out.</summary>
    internal static byte[] Encode(MessageResponse response)
    {
        var node = JsonSerializer.SerializeToNode(response, WireJsonContext.Default.MessageResponse)!.AsObject();
        if (!node.ContainsKey("error")) node["error"] = null;
        return System.Text.Encoding.UTF8.GetBytes(node.ToJsonString());
    }

    private async Task<MessageResponse> ProcessAsync(MessageEvent e, CancellationToken requestAborted)
    {
        if (_plugin.HandlerFor(e) is not { } handler)
            return new MessageResponse { Accepted = false, Intercepted = false, OutboundMessages = [], Error = null };
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(_root.Token, requestAborted);
        cts.CancelAfter(_options.HandlerDeadline);
        var transport = new EventTransport(this);
        // Over HTTP the decision travels in the response, at the end: Intercept() or Pass() only set it.
        var decision = new EventDecision(e.EventId, _plugin.Intercepts);
        PluginError? error = null;
        try
        {
            await handler(new MessageContext(transport, _settings, e, cts.Token, decision)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            error = EventRunner.ErrorOf(ex, cts.IsCancellationRequested, e.EventId);
            var what = e.Command != null ? $"command \"{e.Command.Name}\"" : "message";
            _log("error", $"handler for {what} {e.EventId} failed: {error.Message} ({error.Code})");
        }
        // A handler that failed still intercepted if it had decided so (as over stdio, where the ACK went out first).
        return new MessageResponse { Accepted = error is null, Intercepted = decision.Intercepted, OutboundMessages = transport.Close(), Error = error };
    }

    private async Task<MessageResponse> ProcessChatAsync(ChatEvent e, CancellationToken requestAborted)
    {
        if (!_plugin.Events.TryGetValue(e.EventType, out var handler))
            return new MessageResponse { Accepted = false, Intercepted = false, OutboundMessages = [], Error = null };
        using var cts = CancellationTokenSource.CreateLinkedTokenSource(_root.Token, requestAborted);
        cts.CancelAfter(_options.HandlerDeadline);
        var transport = new EventTransport(this);
        var decision = new EventDecision(e.EventId, _plugin.Intercepts);
        PluginError? error = null;
        try
        {
            await handler(new EventContext(transport, _settings, e, cts.Token, decision)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            error = EventRunner.ErrorOf(ex, cts.IsCancellationRequested, e.EventId);
            _log("error", $"handler for {e.EventType} event {e.EventId} failed: {error.Message} ({error.Code})");
        }
        return new MessageResponse { Accepted = error is null, Intercepted = decision.Intercepted, OutboundMessages = transport.Close(), Error = error };
    }

    /// <summary>Refuses new events (503), cancels running handlers' tokens, waits for them and runs OnStop.</summary>
    public async ValueTask DisposeAsync()
    {
        Task idle;
        lock (_lock)
        {
            if (_closed) return;
            _closed = true;
            _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            if (_inFlight == 0) _idle.TrySetResult();
            idle = _idle.Task;
        }
        _root.Cancel();
        await idle.ConfigureAwait(false);
        await _started.ConfigureAwait(false);
        if (_plugin.OnStop is { } onStop && _startError is null)
        {
            try
            {
                await onStop(new PluginContext(new LifecycleTransport(this), _settings, CancellationToken.None)).ConfigureAwait(false);
            }
            catch (Exception ex)
            {
                _log("error", $"OnStop failed: {ex.GetType().Name}: {ex.Message}");
            }
        }
        _root.Dispose();
    }

    private static readonly IReadOnlyDictionary<string, string> NoHeaders = new Dictionary<string, string>();
    private static readonly IReadOnlyDictionary<string, string> RetryAfter = new Dictionary<string, string> { ["Retry-After"] = "1" };

    internal static HttpAnswer Error(string code, string message, IReadOnlyDictionary<string, string>? headers = null,
        IReadOnlyList<(string Path, string Message)>? issues = null)
    {
        var status = Catalog.LookupError(code)?.Status is int s and > 0 ? s : 500;
        var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteStartObject("error");
            w.WriteString("code", code);
            w.WriteString("message", message);
            w.WriteStartObject("details");
            if (issues is { Count: > 0 })
            {
                w.WriteStartArray("issues");
                foreach (var (path, text) in issues)
                {
                    w.WriteStartObject();
                    w.WriteString("code", "event.field.invalid");
                    w.WriteString("path", path);
                    w.WriteString("message", text);
                    w.WriteEndObject();
                }
                w.WriteEndArray();
            }
            w.WriteEndObject();
            w.WriteEndObject();
            w.WriteEndObject();
        }
        return new HttpAnswer(status, buffer.ToArray(), headers ?? NoHeaders);
    }

    private HostInitializeParamsDirectories Directories =>
        _directories ?? throw new InvalidOperationException(Catalog.ErrSdkHttpConfigInvalid + ": set HttpPluginOptions.DataDirectory to give HTTP handlers directories");

    /// <summary>One event's transport: replies and sends become outbound messages of the response.</summary>
    private sealed class EventTransport(HttpPluginEndpoint endpoint) : IPluginTransport
    {
        private readonly object _lock = new();
        private readonly List<OutboundMessage> _items = [];
        private bool _closed;

        public HostInitializeParamsDirectories Directories => endpoint.Directories;
        public PluginLogger Logger => endpoint._logger;

        public IReadOnlyList<OutboundMessage> Close()
        {
            lock (_lock)
            {
                _closed = true;
                return _items.ToArray();
            }
        }

        private Task<SendResult> Push(Target target, OutboundMessage message)
        {
            lock (_lock)
            {
                if (_closed)
                    throw new InvalidOperationException(Catalog.ErrSdkSendUnavailable + ": the event was already answered; over HTTP every message must be made before the handler returns");
                if (_items.Count >= Catalog.LimitMaxOutboundMessages)
                    throw new InvalidOperationException(Catalog.ErrSdkOutboundLimit + $": this event already has {Catalog.LimitMaxOutboundMessages} outbound messages");
                _items.Add(message);
            }
            return Task.FromResult(new SendResult { Accepted = true, Target = target });
        }

        // Nothing waits for the host here: the token is only checked before the message is added.
        public Task<SendResult> ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var target = new Target { Type = reference.TargetType, Id = reference.TargetId };
            var message = PartChecks.Message(parts, format, target, keyboard);
            return Push(target, new OutboundMessage { Format = format, Parts = message.Parts, Keyboard = message.Keyboard });
        }

        // The response answers its event already: the handler's eventId is not needed there.
        public Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken) =>
            cancellationToken.IsCancellationRequested ? Task.FromCanceled<SendResult>(cancellationToken) : Push(target, new OutboundMessage { Target = target, Format = format, Parts = PartChecks.Normalize(parts, format, target) });
    }

    /// <summary>OnStart and OnStop over HTTP: the host takes messages only in event responses.</summary>
    private sealed class LifecycleTransport(HttpPluginEndpoint endpoint) : IPluginTransport
    {
        public HostInitializeParamsDirectories Directories => endpoint.Directories;
        public PluginLogger Logger => endpoint._logger;

        public Task<SendResult> ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken) => throw Unavailable();
        public Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken) => throw Unavailable();

        private static InvalidOperationException Unavailable() =>
            new(Catalog.ErrSdkSendUnavailable + ": an HTTP plugin cannot send outside an event: the host takes messages only in event responses");
    }
}
