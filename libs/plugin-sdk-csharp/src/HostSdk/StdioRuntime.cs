using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>The stdio runtime of protocol v2 (docs/protocol/v2.md 3-6): one reader, handlers on the thread pool.</summary>
public sealed class StdioRuntime : IPluginTransport
{
    private const int MaxPendingLogs = 64;

    private readonly Plugin _plugin;
    private readonly FrameReader _reader;
    private readonly RpcConnection _conn;
    private readonly TextWriter _stderr;
    private readonly CancellationTokenSource _root = new();
    private readonly TaskCompletionSource<int> _exit = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _lock = new();
    private readonly List<EventTask> _queue = [];
    private readonly Dictionary<string, EventTask> _live = new(StringComparer.Ordinal);
    private int _pendingLogs;

    private HostInitializeParams? _init;
    private Settings _settings = new(new Dictionary<string, JsonElement>());
    private TimeSpan _timeout = TimeSpan.FromMilliseconds(Catalog.RuntimeDefaultRequestTimeoutMilliseconds);
    private TimeSpan _deadline = TimeSpan.FromMilliseconds(Catalog.RuntimeDefaultHandlerDeadlineMilliseconds);
    private int _maxConcurrent = Catalog.RuntimeDefaultMaxConcurrentEvents;
    private int _queueCapacity = Catalog.RuntimeDefaultQueueCapacity;
    private bool _started;
    private bool _stopping;
    private bool _exiting;
    private int _running;
    private TaskCompletionSource? _idle;
    /// <summary>events.completed requests not yet answered: a stop waits for them (within its grace) before the process exits.</summary>
    private readonly HashSet<Task> _completions = new();

    private sealed class EventTask(JsonElement requestId, MessageEvent? messageEvent, CancellationTokenSource cts, ChatEvent? chatEvent = null)
    {
        public JsonElement RequestId { get; } = requestId;
        /// <summary>The message event, or null for another event type (<see cref="Chat"/>).</summary>
        public MessageEvent? Event { get; } = messageEvent;
        public ChatEvent? Chat { get; } = chatEvent;
        public string EventId => Event?.EventId ?? Chat!.EventId;
        public CancellationTokenSource Cts { get; } = cts;
        public bool Started { get; set; }
    }

    internal StdioRuntime(Plugin plugin, Stream stdin, Stream stdout, TextWriter stderr)
    {
        _plugin = plugin;
        _reader = new FrameReader(stdin);
        _conn = new RpcConnection(new FrameWriter(stdout));
        _stderr = stderr;
        Logger = new PluginLogger((level, message, fields, eventId) => Log(level, message, fields, eventId));
    }

    internal PluginLogger Logger { get; }

    PluginLogger IPluginTransport.Logger => Logger;
    HostInitializeParamsDirectories IPluginTransport.Directories => Directories;
    Task<SendResult> IPluginTransport.ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken) =>
        ReplyAsync(eventId, reference, format, parts, keyboard, cancellationToken);
    Task<MediaFinishResult> IPluginTransport.UploadMediaAsync(byte[] data, string contentType, string? fileName, CancellationToken cancellationToken) =>
        UploadMediaAsync(data, contentType, fileName, cancellationToken);
    Task<SendResult> IPluginTransport.SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken) =>
        SendAsync(target, format, parts, eventId, cancellationToken);

    internal HostInitializeParamsDirectories Directories =>
        _init?.Directories ?? throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": directories are known after host.initialize");

    internal async Task<int> RunAsync()
    {
        _ = Task.Run(ReadLoopAsync);
        return await _exit.Task.ConfigureAwait(false);
    }

    private void Error(string line)
    {
        lock (_stderr) { _stderr.WriteLine(line); _stderr.Flush(); }
    }

    private async Task ReadLoopAsync()
    {
        while (true)
        {
            RpcMessage? msg;
            try
            {
                msg = await _reader.NextAsync().ConfigureAwait(false);
            }
            catch (FramingException e)
            {
                Error($"[error] the host stream broke ({e.Code}): {e.Message}");
                _root.Cancel();
                _ = Task.Run(() => ShutdownAsync(1, orphan: true));
                return;
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                msg = null;
            }
            if (msg == null)
            {
                _root.Cancel();
                _ = Task.Run(() => ShutdownAsync(0, orphan: true));
                return;
            }
            if (msg.Method == null)
            {
                _conn.Deliver(msg);
                continue;
            }
            if (msg.Id is not { } id) continue; // notifications are not part of v2
            try
            {
                if (!await OnRequestAsync(msg, id).ConfigureAwait(false)) return;
            }
            catch (Exception e)
            {
                // A fault of the SDK itself: answer this request and keep reading, so the host is never left waiting.
                Error($"[error] {msg.Method} failed inside the SDK: {e}");
                await _conn.RespondErrorAsync(id, Catalog.RpcInternalError, $"{msg.Method} failed inside the plugin's SDK: {e.Message}").ConfigureAwait(false);
            }
        }
    }

    private async Task<bool> OnRequestAsync(RpcMessage m, JsonElement id)
    {
        if (m.Method == Catalog.MethodHostInitialize) return await InitializeAsync(m, id).ConfigureAwait(false);
        bool initialized;
        lock (_lock) initialized = _init != null;
        if (!initialized)
        {
            await _conn.RespondErrorAsync(id, Catalog.RpcNotInitialized, $"{m.Method} arrived before host.initialize; the plugin answers nothing else until the handshake").ConfigureAwait(false);
            return true;
        }
        switch (m.Method)
        {
            case Catalog.MethodEventsMessage: await OnEventAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodEventsDeliver: await OnDeliverAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodEventsCancel: await OnCancelAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodPluginPing: await OnPingAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodPluginStop: await OnStopAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodSettingsChanged: OnSettingsChanged(m, id); break;
            default:
                await _conn.RespondErrorAsync(id, Catalog.RpcMethodNotFound, $"method \"{m.Method}\" is not part of protocol v2 for plugins").ConfigureAwait(false);
                break;
        }
        return true;
    }

    /// <summary>Checks the values the SDK relies on (the envelope is open: unknown fields are fine); the first fault, or null.</summary>
    /// <summary>What a handler's exception reports in its completion.</summary>
    internal static PluginError ErrorOf(Exception ex, bool cancelled, string eventId) => ex switch
    {
        HandlerException h => new PluginError { Code = h.Code, Message = Clip(h.Message) },
        PluginSdkException s => new PluginError { Code = s.Code, Message = Clip(s.Message) },
        MessageException me => new PluginError { Code = me.Code, Message = Clip(me.Message) },
        OperationCanceledException when cancelled =>
            new PluginError { Code = Catalog.ErrSdkEventCancelled, Message = $"the handler of event {eventId} was cancelled" },
        _ => new PluginError { Code = Catalog.CodePluginHandlerFailed, Message = Clip(ex.GetType().Name + ": " + ex.Message) },
    };

    /// <summary>The values of an events.deliver event the SDK relies on (the envelope is open); the first fault, or null.</summary>
    internal static (string Path, string Message)? CheckChatEvent(ChatEvent e)
    {
        var required = new (string Path, string? Value)[]
        {
            ("eventId", e.EventId), ("timestamp", e.Timestamp), ("bot.botAccountId", e.Bot?.BotAccountId),
            ("conversation.conversationId", e.Conversation?.ConversationId),
        };
        foreach (var (path, value) in required)
            if (string.IsNullOrEmpty(value)) return (path, path + " must not be empty");
        if (e.EventType is not ("interaction.created" or "bot.added" or "bot.removed" or "conversation.opened"))
            return ("eventType", "eventType must be \"interaction.created\", \"bot.added\", \"bot.removed\" or \"conversation.opened\"");
        if (e.MessageReference is { } r && (string.IsNullOrEmpty(r.MessageId) || string.IsNullOrEmpty(r.TargetId) || r.TargetType is not ("group" or "channel" or "user" or "direct")))
            return ("messageReference", "messageReference needs messageId, targetId and a targetType of group, channel, user or direct");
        if (e.Interaction is { } i && string.IsNullOrEmpty(i.Id)) return ("interaction.id", "interaction.id must not be empty");
        return null;
    }

    internal static (string Path, string Message)? CheckEvent(MessageEvent e)
    {
        var required = new (string Path, string Value)[]
        {
            ("eventId", e.EventId), ("timestamp", e.Timestamp), ("bot.botAccountId", e.Bot.BotAccountId),
            ("conversation.conversationId", e.Conversation.ConversationId), ("sender.mentionId", e.Sender.MentionId),
            ("message.id", e.Message.Id), ("messageReference.messageId", e.MessageReference.MessageId),
            ("messageReference.targetId", e.MessageReference.TargetId),
        };
        foreach (var (path, value) in required)
            if (string.IsNullOrEmpty(value)) return (path, path + " must not be empty");
        if (e.EventType != "message.created") return ("eventType", "eventType must be \"message.created\"");
        if (e.MessageReference.TargetType is not ("group" or "channel" or "user" or "direct"))
            return ("messageReference.targetType", "messageReference.targetType must be group, channel, user or direct");
        if (e.Conversation.Type is not ("group" or "c2c" or "channel" or "direct"))
            return ("conversation.type", "conversation.type must be group, c2c, channel or direct");
        return null;
    }

    private Task InvalidParamsAsync(JsonElement id, string method, string path, string message, string code = "params.field.invalid") =>
        _conn.RespondErrorAsync(id, Catalog.RpcInvalidParams, $"{method} params are invalid: {message}", w =>
        {
            w.WriteStartArray("issues");
            w.WriteStartObject();
            w.WriteString("code", code);
            w.WriteString("path", path);
            w.WriteString("message", message);
            w.WriteEndObject();
            w.WriteEndArray();
        });

    private static T? Decode<T>(RpcMessage m, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, out string? problem)
    {
        problem = null;
        if (m.Params is not { ValueKind: JsonValueKind.Object } p)
        {
            problem = "params must be an object";
            return default;
        }
        try
        {
            return p.Deserialize(type);
        }
        catch (JsonException e)
        {
            problem = e.Message;
            return default;
        }
    }

    private async Task<bool> InitializeAsync(RpcMessage m, JsonElement id)
    {
        lock (_lock)
        {
            if (_init != null)
            {
                _ = _conn.RespondErrorAsync(id, Catalog.RpcAlreadyInitialized, "host.initialize was already answered; it is sent once per process");
                return true;
            }
        }
        var init = Decode(m, WireJsonContext.Default.HostInitializeParams, out var problem);
        if (init != null && init.Token.Length < 32) problem = "token must have at least 32 characters";
        if (init != null && init.Encoding != "json") problem = "encoding must be \"json\"";
        if (init == null || problem != null)
        {
            await InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return true;
        }
        string? refusal = null;
        if (!init.SupportedProtocolVersions.Contains(Catalog.ProtocolVersion))
            refusal = $"the host supports protocol versions [{string.Join(", ", init.SupportedProtocolVersions)}] but this plugin speaks {Catalog.ProtocolVersion}; update the host or rebuild the plugin with a matching SDK";
        else if (init.PluginId != _plugin.PluginId)
            refusal = $"host.initialize is for plugin \"{init.PluginId}\" but this process is plugin \"{_plugin.PluginId}\"; make manifest.json and the plugin use the same pluginId, rebuild and reinstall";
        else
            refusal = _plugin.InterceptRefusal();
        if (refusal != null)
        {
            await _conn.RespondErrorAsync(id, Catalog.RpcPluginError, refusal).ConfigureAwait(false);
            Error("[error] " + refusal);
            _ = Task.Run(() => ShutdownAsync(1, orphan: false));
            return false;
        }
        var limits = init.Runtime ?? new RuntimeLimits();
        lock (_lock)
        {
            _init = init;
            _timeout = TimeSpan.FromMilliseconds(limits.RequestTimeoutMillisecondsOrDefault);
            _deadline = TimeSpan.FromMilliseconds(limits.HandlerDeadlineMillisecondsOrDefault);
            _maxConcurrent = (int)Math.Max(1, limits.MaxConcurrentEventsOrDefault);
            _queueCapacity = (int)Math.Max(0, limits.QueueCapacityOrDefault);
            _settings = new Settings(init.Settings ?? new Dictionary<string, JsonElement>());
        }
        _reader.MaxHeader = (int)Math.Min(int.MaxValue, limits.MaxHeaderLengthOrDefault);
        _reader.MaxPayload = (int)Math.Min(int.MaxValue, limits.MaxPayloadLengthOrDefault);
        var capabilities = Catalog.Methods.Where(x => x.Direction == "hostToPlugin" && x.Method != Catalog.MethodHostInitialize).Select(x => x.Method).ToList();
        await _conn.RespondAsync(id, new HostInitializeResult
        {
            PluginId = _plugin.PluginId,
            SdkName = Plugin.SdkName,
            SdkVersion = Plugin.SdkVersion,
            Capabilities = capabilities,
        }, WireJsonContext.Default.HostInitializeResult).ConfigureAwait(false);
        _ = Task.Run(StartAsync);
        return true;
    }

    private async Task StartAsync()
    {
        if (_plugin.OnStart is { } onStart)
        {
            try
            {
                await onStart(new PluginContext(this, _settings, _root.Token)).ConfigureAwait(false);
            }
            catch (Exception e)
            {
                Log("error", "OnStart failed, stopping: " + e.Message, null);
                await ShutdownAsync(1, orphan: false).ConfigureAwait(false);
                return;
            }
        }
        lock (_lock) _started = true;
        Pump();
    }

    private async Task OnEventAsync(RpcMessage m, JsonElement id)
    {
        bool stopping;
        lock (_lock) stopping = _stopping;
        if (stopping)
        {
            await _conn.RespondErrorAsync(id, Catalog.RpcStopping, "the plugin is stopping and takes no new events").ConfigureAwait(false);
            return;
        }
        var e = Decode(m, WireJsonContext.Default.MessageEvent, out var problem);
        if (e == null || problem != null)
        {
            await InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return;
        }
        if (CheckEvent(e) is { } fault)
        {
            await InvalidParamsAsync(id, m.Method!, fault.Path, fault.Message, "event.field.invalid").ConfigureAwait(false);
            return;
        }
        await AdmitAsync(id, e.EventId, _plugin.HandlerFor(e) != null, cts => new EventTask(id, e, cts)).ConfigureAwait(false);
    }

    /// <summary>events.deliver: an event of another type, admitted, answered and completed like a message (v2.md 4.11).</summary>
    private async Task OnDeliverAsync(RpcMessage m, JsonElement id)
    {
        bool stopping;
        lock (_lock) stopping = _stopping;
        if (stopping)
        {
            await _conn.RespondErrorAsync(id, Catalog.RpcStopping, "the plugin is stopping and takes no new events").ConfigureAwait(false);
            return;
        }
        var e = Decode(m, WireJsonContext.Default.ChatEvent, out var problem);
        if (e == null || problem != null)
        {
            await InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return;
        }
        if (CheckChatEvent(e) is { } fault)
        {
            await InvalidParamsAsync(id, m.Method!, fault.Path, fault.Message, "event.field.invalid").ConfigureAwait(false);
            return;
        }
        await AdmitAsync(id, e.EventId, _plugin.Events.ContainsKey(e.EventType), cts => new EventTask(id, null, cts, e)).ConfigureAwait(false);
    }

    private async Task AdmitAsync(JsonElement id, string eventId, bool handled, Func<CancellationTokenSource, EventTask> create)
    {
        if (!handled)
        {
            // No handler takes it: the decision is known at once and holds no slot.
            await _conn.RespondAsync(id, new EventAck { EventId = eventId, Accepted = false }, WireJsonContext.Default.EventAck).ConfigureAwait(false);
            return;
        }
        EventTask task;
        bool runNow;
        lock (_lock)
        {
            if (_live.ContainsKey(eventId))
            {
                _ = _conn.RespondErrorAsync(id, Catalog.RpcInvalidParams, $"event {eventId} is already being handled; every delivery needs its own eventId");
                return;
            }
            var refused = !_started ? _queue.Count >= _maxConcurrent + _queueCapacity : _running >= _maxConcurrent || _queue.Count > 0;
            if (refused)
            {
                var (n, q) = (_maxConcurrent, _queueCapacity);
                _ = _conn.RespondErrorAsync(id, Catalog.RpcOverloaded, $"all {n} event handler(s) are busy; event {eventId} was refused", w =>
                {
                    w.WriteNumber("maxConcurrentEvents", n);
                    w.WriteNumber("queueCapacity", q);
                });
                return;
            }
            var cts = CancellationTokenSource.CreateLinkedTokenSource(_root.Token);
            // Counted from admission, as the host counts from sending (6.5).
            cts.CancelAfter(_deadline);
            task = create(cts);
            _live[eventId] = task;
            runNow = _started;
            if (runNow)
            {
                _running++;
                task.Started = true;
            }
            else _queue.Add(task);
        }
        if (runNow) _ = Task.Run(() => RunEventAsync(task));
    }

    private void Pump()
    {
        while (true)
        {
            EventTask task;
            lock (_lock)
            {
                if (!_started || _running >= _maxConcurrent || _queue.Count == 0) return;
                task = _queue[0];
                _queue.RemoveAt(0);
                _running++;
                task.Started = true;
            }
            _ = Task.Run(() => RunEventAsync(task));
        }
    }

    private async Task RunEventAsync(EventTask task)
    {
        var eventId = task.EventId;
        // The ACK is the decision (4.2): a plugin that cannot intercept sends it before its handler runs; one that can,
        // when the handler calls Intercept() or Pass(), or when the handler ends.
        var decision = new EventDecision(eventId, _plugin.Intercepts, intercepted =>
            _ = _conn.RespondAsync(task.RequestId, new EventAck { EventId = eventId, Accepted = true, Intercepted = intercepted }, WireJsonContext.Default.EventAck));
        if (!_plugin.Intercepts) decision.TrySettle(false);
        var clock = System.Diagnostics.Stopwatch.StartNew();
        PluginError? error = null;
        try
        {
            if (task.Event is { } e)
                await _plugin.HandlerFor(e)!(new MessageContext(this, _settings, e, task.Cts.Token, decision)).ConfigureAwait(false);
            else
                await _plugin.Events[task.Chat!.EventType](new EventContext(this, _settings, task.Chat, task.Cts.Token, decision)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            error = ErrorOf(ex, task.Cts.IsCancellationRequested, eventId);
            var what = task.Event is { Command: { } c } ? $"command \"{c.Name}\"" : task.Event != null ? "message" : task.Chat!.EventType + " event";
            Log("error", $"handler for {what} {eventId} failed: {error.Message}", null, eventId);
        }
        // A handler that failed before deciding declines the event (with its error, and no events.completed follows);
        // one that ended without deciding passes.
        var declined = false;
        if (!decision.Decided)
        {
            if (error != null)
            {
                declined = decision.TrySettleDeclined();
                if (declined)
                    _ = _conn.RespondAsync(task.RequestId, new EventAck { EventId = eventId, Accepted = false, Intercepted = false, Error = error }, WireJsonContext.Default.EventAck);
            }
            else decision.TrySettle(false);
        }
        var duration = clock.Elapsed.TotalMilliseconds;
        task.Cts.Dispose();
        lock (_lock)
        {
            _live.Remove(eventId);
            _running--;
        }
        if (declined)
        {
            lock (_lock)
            {
                if (_running == 0) _idle?.TrySetResult();
            }
            Pump();
            return;
        }
        // The slot is free before events.completed goes out: the host may send the next event at once.
        var completed = _conn.RequestAsync(Catalog.MethodEventsCompleted,
            new EventsCompletedParams { Token = Token, EventId = eventId, Error = error, DurationMs = Math.Round(duration, 3) },
            WireJsonContext.Default.EventsCompletedParams, RequestTimeout);
        lock (_lock) _completions.Add(completed);
        _ = completed.ContinueWith(t =>
        {
            lock (_lock) _completions.Remove(completed);
            if (t.Exception != null && !_conn.IsClosed) Error($"[warn] events.completed for {eventId} failed: {t.Exception.InnerException?.Message}");
        }, TaskScheduler.Default);
        lock (_lock)
        {
            if (_running == 0) _idle?.TrySetResult();
        }
        Pump();
    }

    private static string Clip(string s) => s.Length <= 2000 ? s : s[..2000];

    private bool CancelEvent(string eventId)
    {
        EventTask? task;
        lock (_lock)
        {
            if (!_live.TryGetValue(eventId, out task)) return false;
            if (!task.Started)
            {
                _queue.Remove(task);
                _live.Remove(eventId);
            }
        }
        if (!task.Started)
        {
            task.Cts.Dispose();
            _ = _conn.RespondErrorAsync(task.RequestId, Catalog.RpcCancelled, $"event {eventId} was cancelled before its handler started");
            return true;
        }
        try { task.Cts.Cancel(); } catch (ObjectDisposedException) { return false; }
        return true;
    }

    private async Task OnCancelAsync(RpcMessage m, JsonElement id)
    {
        var p = Decode(m, WireJsonContext.Default.EventsCancelParams, out var problem);
        if (p != null && p.Reason is not ("ackTimeout" or "deadline")) problem = "reason must be \"ackTimeout\" or \"deadline\"";
        if (p == null || problem != null)
        {
            await InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return;
        }
        await _conn.RespondAsync(id, new EventsCancelResult { Cancelled = CancelEvent(p.EventId) }, WireJsonContext.Default.EventsCancelResult).ConfigureAwait(false);
    }

    private async Task OnPingAsync(RpcMessage m, JsonElement id)
    {
        string? nonce = null;
        if (m.Params is { ValueKind: JsonValueKind.Object } p && p.TryGetProperty("nonce", out var n) && n.ValueKind == JsonValueKind.String) nonce = n.GetString();
        long running, queued;
        lock (_lock) (running, queued) = (_running, _queue.Count);
        await _conn.RespondAsync(id, new PluginPingResult { Nonce = nonce, InFlightEvents = running, QueuedEvents = queued }, WireJsonContext.Default.PluginPingResult).ConfigureAwait(false);
    }

    private async Task OnStopAsync(RpcMessage m, JsonElement id)
    {
        var p = new PluginStopParams();
        if (m.Params is { ValueKind: not JsonValueKind.Null })
        {
            p = Decode(m, WireJsonContext.Default.PluginStopParams, out var problem);
            if (p == null || problem != null)
            {
                await InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
                return;
            }
        }
        await _conn.RespondAsync(id, new PluginStopResult { Accepted = true }, WireJsonContext.Default.PluginStopResult).ConfigureAwait(false);
        lock (_lock)
        {
            if (_stopping) return;
            _stopping = true; // from now on events.message is answered Stopping
        }
        _root.Cancel();
        _ = Task.Run(() => ShutdownAsync(0, orphan: false, TimeSpan.FromMilliseconds(Math.Max(0, p.GraceMillisecondsOrDefault))));
    }

    private void OnSettingsChanged(RpcMessage m, JsonElement id)
    {
        var p = Decode(m, WireJsonContext.Default.SettingsChangedParams, out var problem);
        if (p == null || problem != null)
        {
            _ = InvalidParamsAsync(id, m.Method!, "settings", problem ?? "params are missing");
            return;
        }
        _ = Task.Run(async () =>
        {
            var next = new Settings(p.Settings);
            if (_plugin.OnSettingsChanged is { } h)
            {
                try
                {
                    await h(new PluginContext(this, next, _root.Token)).ConfigureAwait(false);
                }
                catch (Exception e)
                {
                    Log("error", "OnSettingsChanged failed; keeping the previous settings: " + e.Message, null);
                    await _conn.RespondErrorAsync(id, Catalog.RpcPluginError, "OnSettingsChanged failed: " + e.Message).ConfigureAwait(false);
                    return;
                }
            }
            lock (_lock) _settings = next;
            await _conn.RespondAsync(id, new SettingsChangedResult { Applied = true }, WireJsonContext.Default.SettingsChangedResult).ConfigureAwait(false);
        });
    }

    /// <summary>Ends the runtime once: refuses waiting events, waits for running handlers (not when the host is gone), runs OnStop, exits.</summary>
    private async Task ShutdownAsync(int code, bool orphan, TimeSpan? grace = null)
    {
        List<EventTask> waiting;
        Task? idle = null;
        bool started;
        lock (_lock)
        {
            if (_exiting) return;
            _exiting = true;
            _stopping = true;
            waiting = [.. _queue];
            _queue.Clear();
            foreach (var t in waiting) _live.Remove(t.EventId);
            if (_running > 0)
            {
                _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                idle = _idle.Task;
            }
            started = _started;
        }
        foreach (var t in waiting)
        {
            t.Cts.Dispose();
            await _conn.RespondErrorAsync(t.RequestId, Catalog.RpcStopping, "the plugin stopped before this queued event started").ConfigureAwait(false);
        }
        var stopClock = System.Diagnostics.Stopwatch.StartNew();
        if (idle != null && !orphan)
        {
            // Running handlers finish within the grace period plugin.stop gave (the host stops waiting after it too).
            try
            {
                await (grace is { } g ? idle.WaitAsync(g) : idle).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                Error($"[warn] handlers still ran when the grace period of {grace!.Value.TotalMilliseconds} ms ended; exiting without them");
            }
        }
        if (!orphan)
        {
            // The completions of the handlers that finished go out (and are answered) before the process ends,
            // within what is left of the grace period.
            Task[] reports;
            lock (_lock) reports = [.. _completions];
            if (reports.Length > 0)
            {
                var left = (grace ?? TimeSpan.FromSeconds(1)) - stopClock.Elapsed;
                try
                {
                    await Task.WhenAll(reports).WaitAsync(left > TimeSpan.FromMilliseconds(100) ? left : TimeSpan.FromMilliseconds(100)).ConfigureAwait(false);
                }
                catch (Exception)
                {
                    // A report that failed or timed out was logged by its own continuation.
                }
            }
        }
        if (_plugin.OnStop is { } onStop && started)
        {
            var run = Task.Run(() => onStop(new PluginContext(this, _settings, CancellationToken.None)));
            try
            {
                if (orphan) await run.WaitAsync(TimeSpan.FromSeconds(1)).ConfigureAwait(false);
                else await run.ConfigureAwait(false);
            }
            catch (Exception e)
            {
                Error("[error] OnStop failed: " + e.Message);
            }
        }
        _root.Cancel();
        _conn.FailAll("the plugin stopped");
        _exit.TrySetResult(code);
    }

    private string Token
    {
        get
        {
            lock (_lock) return _init?.Token ?? "";
        }
    }

    private TimeSpan RequestTimeout
    {
        get
        {
            lock (_lock) return _timeout;
        }
    }

    private Task<SendResult> CallAsync<T>(string method, T value, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, Target? target, CancellationToken cancellationToken) =>
        CallAsync(method, value, type, WireJsonContext.Default.SendResult, target, cancellationToken);

    /// <summary>A plugin-to-host request; a refusal that names a message.* code (error.data.code) is a <see cref="MessageException"/> from the host.</summary>
    private async Task<TResult> CallAsync<T, TResult>(string method, T value, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type,
        System.Text.Json.Serialization.Metadata.JsonTypeInfo<TResult> resultType, Target? target, CancellationToken cancellationToken)
    {
        JsonElement raw;
        try
        {
            // Bounded by the request timeout and by the token the context chose: the caller's, linked with the handler's
            // own unless that was cancelled before the call (a cancelled handler may still send its last reply).
            raw = await _conn.RequestAsync(method, value, type, RequestTimeout, cancellationToken).ConfigureAwait(false);
        }
        catch (HostCallException e) when (e.ErrorData is { ValueKind: JsonValueKind.Object } d && d.TryGetProperty("code", out var c)
            && c.ValueKind == JsonValueKind.String && c.GetString()!.StartsWith("message.", StringComparison.Ordinal))
        {
            throw new MessageException(c.GetString()!, e.Message, target, fromHost: true);
        }
        try
        {
            return raw.Deserialize(resultType) ?? throw new JsonException("null");
        }
        catch (JsonException e)
        {
            throw new HostCallException(method, Catalog.RpcInternalError, $"the host's answer to {method} does not match its result: " + e.Message);
        }
    }

    private IReadOnlyList<string>? _permissions;
    private bool _permissionsRead;

    /// <summary>The permissions of the manifest the plugin runs with (null when none is found: the host checks).</summary>
    private IReadOnlyList<string>? Permissions
    {
        get
        {
            lock (_lock)
            {
                if (!_permissionsRead) (_permissions, _permissionsRead) = (_plugin.FindManifest()?.Manifest.Permissions ?? null, true);
                return _permissions;
            }
        }
    }

    /// <summary>
    /// media.upload, then the bytes in order in chunks of at most the size the host names, each sent after the answer to
    /// the one before, then media.finish (docs/protocol/v2.md 4.12).
    /// </summary>
    internal async Task<MediaFinishResult> UploadMediaAsync(byte[] data, string contentType, string? fileName, CancellationToken cancellationToken)
    {
        MediaChecks.Check(Permissions, data);
        var token = Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": media.upload cannot be sent before host.initialize");
        var begun = await CallAsync(Catalog.MethodMediaUpload, new MediaUploadParams { Token = token, ContentType = contentType, Size = data.Length, FileName = fileName },
            WireJsonContext.Default.MediaUploadParams, WireJsonContext.Default.MediaUploadResult, null, cancellationToken).ConfigureAwait(false);
        var step = (int)Math.Clamp(begun.MaxChunkBytes, 1, Catalog.LimitMaxMediaChunkBytes);
        for (var offset = 0; offset < data.Length; offset += step)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var chunk = Convert.ToBase64String(data, offset, Math.Min(step, data.Length - offset));
            await CallAsync(Catalog.MethodMediaChunk, new MediaChunkParams { Token = token, UploadId = begun.UploadId, Offset = offset, Data = chunk },
                WireJsonContext.Default.MediaChunkParams, WireJsonContext.Default.MediaChunkResult, null, cancellationToken).ConfigureAwait(false);
        }
        return await CallAsync(Catalog.MethodMediaFinish, new MediaFinishParams { Token = token, UploadId = begun.UploadId },
            WireJsonContext.Default.MediaFinishParams, WireJsonContext.Default.MediaFinishResult, null, cancellationToken).ConfigureAwait(false);
    }

    internal Task<SendResult> ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken)
    {
        var target = new Target { Type = reference.TargetType, Id = reference.TargetId };
        var message = PartChecks.Message(parts, format, target, keyboard);
        var token = Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": messages.reply cannot be sent before host.initialize");
        return CallAsync(Catalog.MethodMessagesReply, new MessagesReplyParams { Token = token, EventId = eventId, Message = message },
            WireJsonContext.Default.MessagesReplyParams, target, cancellationToken);
    }

    internal Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken)
    {
        var message = new OutgoingMessage { Format = format, Parts = PartChecks.Normalize(parts, format, target) };
        var token = Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": messages.send cannot be sent before host.initialize");
        return CallAsync(Catalog.MethodMessagesSend, new MessagesSendParams { Token = token, Target = target, Message = message, EventId = eventId },
            WireJsonContext.Default.MessagesSendParams, target, cancellationToken);
    }

    private void Log(string level, string message, IReadOnlyDictionary<string, JsonElement>? fields) => Log(level, message, fields, null);

    /// <summary>log.write, naming <paramref name="eventId"/> (the handler's event) when it is not null.</summary>
    private void Log(string level, string message, IReadOnlyDictionary<string, JsonElement>? fields, string? eventId)
    {
        var line = $"[{level}] {message}";
        var token = Token;
        if (token.Length == 0 || _conn.IsClosed || Interlocked.Increment(ref _pendingLogs) > MaxPendingLogs)
        {
            if (token.Length != 0 && !_conn.IsClosed) Interlocked.Decrement(ref _pendingLogs);
            Error(line); // before the handshake, or too many lines wait for the host: keep this one on stderr
            return;
        }
        var call = _conn.RequestAsync(Catalog.MethodLogWrite, new LogWriteParams { Token = token, Level = level, Message = message, Fields = fields, EventId = eventId },
            WireJsonContext.Default.LogWriteParams, RequestTimeout);
        _ = call.ContinueWith(t =>
        {
            Interlocked.Decrement(ref _pendingLogs);
            if (t.Exception != null) Error(line);
        }, TaskScheduler.Default);
    }
}
