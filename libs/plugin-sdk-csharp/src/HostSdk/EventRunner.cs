using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>
/// Runs the events of a stdio plugin (docs/protocol/v2.md 4.2, 4.11, 6): admits events.message and events.deliver
/// within maxConcurrentEvents and queueCapacity, runs their handlers on the thread pool, sends the decision (the ACK)
/// and events.completed, cancels a handler on events.cancel, at its deadline and on stop, and waits for the running
/// ones when the plugin stops.
/// </summary>
internal sealed class EventRunner
{
    private readonly Plugin _plugin;
    private readonly StdioConnection _conn;
    private readonly StdioRuntime _runtime;
    private readonly CancellationToken _root;
    private readonly object _lock = new();
    private readonly List<EventTask> _queue = [];
    private readonly Dictionary<string, EventTask> _live = new(StringComparer.Ordinal);
    /// <summary>events.completed requests not yet answered: a stop waits for them (within its grace) before the process exits.</summary>
    private readonly HashSet<Task> _completions = new();

    private TimeSpan _deadline = TimeSpan.FromMilliseconds(Catalog.RuntimeDefaultHandlerDeadlineMilliseconds);
    private int _maxConcurrent = Catalog.RuntimeDefaultMaxConcurrentEvents;
    private int _queueCapacity = Catalog.RuntimeDefaultQueueCapacity;
    private bool _started;
    private bool _stopping;
    private bool _exiting;
    private int _running;
    private TaskCompletionSource? _idle;

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

    /// <param name="root">Cancelled when the plugin stops or loses its host; every handler's token is linked to it.</param>
    public EventRunner(Plugin plugin, StdioConnection conn, StdioRuntime runtime, CancellationToken root)
    {
        _plugin = plugin;
        _conn = conn;
        _runtime = runtime;
        _root = root;
    }

    /// <summary>Takes the limits host.initialize gave (before any event is admitted).</summary>
    public void Configure(TimeSpan handlerDeadline, int maxConcurrent, int queueCapacity)
    {
        lock (_lock)
        {
            _deadline = handlerDeadline;
            _maxConcurrent = maxConcurrent;
            _queueCapacity = queueCapacity;
        }
    }

    /// <summary>Lets handlers run (after OnStart): the queued events start.</summary>
    public void Start()
    {
        lock (_lock) _started = true;
        Pump();
    }

    /// <summary>Marks the plugin stopping (plugin.stop): new events are refused from now on. False when it already was.</summary>
    public bool TryBeginStop()
    {
        lock (_lock)
        {
            if (_stopping) return false;
            _stopping = true;
            return true;
        }
    }

    /// <summary>The handlers running and the events waiting, for plugin.ping.</summary>
    public (long Running, long Queued) Counts()
    {
        lock (_lock) return (_running, _queue.Count);
    }

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

    /// <summary>The values of a message event the SDK relies on (the envelope is open: unknown fields are fine); the first fault, or null.</summary>
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

    private static string Clip(string s) => s.Length <= 2000 ? s : s[..2000];

    /// <summary>events.message: checked, then admitted (or refused, or declined when no handler takes it).</summary>
    public async Task OnMessageAsync(RpcMessage m, JsonElement id)
    {
        if (await CheckedAsync(m, id, WireJsonContext.Default.MessageEvent, CheckEvent).ConfigureAwait(false) is not { } e) return;
        await AdmitAsync(id, e.EventId, _plugin.HandlerFor(e) != null, cts => new EventTask(id, e, cts)).ConfigureAwait(false);
    }

    /// <summary>events.deliver: an event of another type, admitted, answered and completed like a message (v2.md 4.11).</summary>
    public async Task OnDeliverAsync(RpcMessage m, JsonElement id)
    {
        if (await CheckedAsync(m, id, WireJsonContext.Default.ChatEvent, CheckChatEvent).ConfigureAwait(false) is not { } e) return;
        await AdmitAsync(id, e.EventId, _plugin.Events.ContainsKey(e.EventType), cts => new EventTask(id, null, cts, e)).ConfigureAwait(false);
    }

    /// <summary>
    /// The event of an events.message or events.deliver request, decoded and checked; null when the request was
    /// answered already: Stopping while the plugin stops, InvalidParams for params that do not decode or break a rule.
    /// </summary>
    private async Task<T?> CheckedAsync<T>(
        RpcMessage m,
        JsonElement id,
        JsonTypeInfo<T> type,
        Func<T, (string Path, string Message)?> check)
        where T : class
    {
        bool stopping;
        lock (_lock) stopping = _stopping;
        if (stopping)
        {
            await _conn.RespondErrorAsync(id, Catalog.RpcStopping, "the plugin is stopping and takes no new events").ConfigureAwait(false);
            return null;
        }
        var e = StdioConnection.Decode(m, type, out var problem);
        if (e == null || problem != null)
        {
            await _conn.InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return null;
        }
        if (check(e) is { } fault)
        {
            await _conn.InvalidParamsAsync(id, m.Method!, fault.Path, fault.Message, "event.field.invalid").ConfigureAwait(false);
            return null;
        }
        return e;
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
            var cts = CancellationTokenSource.CreateLinkedTokenSource(_root);
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
                await _plugin.HandlerFor(e)!(new MessageContext(_runtime, _runtime.Settings, e, task.Cts.Token, decision)).ConfigureAwait(false);
            else
                await _plugin.Events[task.Chat!.EventType](new EventContext(_runtime, _runtime.Settings, task.Chat, task.Cts.Token, decision)).ConfigureAwait(false);
        }
        catch (Exception ex)
        {
            error = ErrorOf(ex, task.Cts.IsCancellationRequested, eventId);
            var what = task.Event is { Command: { } c } ? $"command \"{c.Name}\"" : task.Event != null ? "message" : task.Chat!.EventType + " event";
            _conn.Log("error", $"handler for {what} {eventId} failed: {error.Message}", null, eventId);
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
            new EventsCompletedParams { Token = _conn.Token, EventId = eventId, Error = error, DurationMs = Math.Round(duration, 3) },
            WireJsonContext.Default.EventsCompletedParams);
        lock (_lock) _completions.Add(completed);
        _ = completed.ContinueWith(t =>
        {
            lock (_lock) _completions.Remove(completed);
            if (t.Exception != null && !_conn.IsClosed) _conn.Error($"[warn] events.completed for {eventId} failed: {t.Exception.InnerException?.Message}");
        }, TaskScheduler.Default);
        lock (_lock)
        {
            if (_running == 0) _idle?.TrySetResult();
        }
        Pump();
    }

    /// <summary>events.cancel: cancels a running handler's token, or refuses a queued event; false for an event not being handled.</summary>
    public bool Cancel(string eventId)
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

    /// <summary>
    /// Ends event handling once: refuses the queued events, waits for the running handlers and then for their
    /// events.completed answers (within <paramref name="grace"/>; not at all when the host is gone). Returns whether
    /// handlers had started (OnStart ran), or null when the runner was already ending.
    /// </summary>
    public async Task<bool?> StopAsync(bool orphan, TimeSpan? grace)
    {
        List<EventTask> waiting;
        Task? idle = null;
        bool started;
        lock (_lock)
        {
            if (_exiting) return null;
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
                _conn.Error($"[warn] handlers still ran when the grace period of {grace!.Value.TotalMilliseconds} ms ended; exiting without them");
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
        return started;
    }
}
