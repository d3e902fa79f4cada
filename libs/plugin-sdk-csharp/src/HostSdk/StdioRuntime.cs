using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>
/// The stdio runtime of protocol v2 (docs/protocol/v2.md 3-6): one reader, handlers on the thread pool. The
/// <see cref="StdioConnection"/> carries the frames and matches calls to answers, the <see cref="EventRunner"/> runs the
/// events; this class answers the host's requests (handshake, ping, stop, settings) and gives contexts their calls.
/// </summary>
public sealed class StdioRuntime : IPluginTransport
{
    private readonly Plugin _plugin;
    private readonly StdioConnection _conn;
    private readonly EventRunner _events;
    private readonly CancellationTokenSource _root = new();
    private readonly TaskCompletionSource<int> _exit = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly object _lock = new();

    private HostInitializeParams? _init;
    private Settings _settings = new(new Dictionary<string, JsonElement>());

    internal StdioRuntime(Plugin plugin, Stream stdin, Stream stdout, TextWriter stderr)
    {
        _plugin = plugin;
        _conn = new StdioConnection(stdin, stdout, stderr);
        _events = new EventRunner(plugin, _conn, this, _root.Token);
        Logger = new PluginLogger((level, message, fields, eventId) => _conn.Log(level, message, fields, eventId));
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

    /// <summary>The settings handlers get: host.initialize's, then each one settings.changed applied.</summary>
    internal Settings Settings => _settings;

    internal async Task<int> RunAsync()
    {
        _ = Task.Run(ReadAsync);
        return await _exit.Task.ConfigureAwait(false);
    }

    private async Task ReadAsync()
    {
        // The host's stream ended or broke: handlers are cancelled, and the plugin ends without waiting for them.
        if (await _conn.ReadLoopAsync(OnRequestAsync).ConfigureAwait(false) is not { } code) return;
        _root.Cancel();
        _ = Task.Run(() => ShutdownAsync(code, orphan: true));
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
            case Catalog.MethodEventsMessage: await _events.OnMessageAsync(m, id).ConfigureAwait(false); break;
            case Catalog.MethodEventsDeliver: await _events.OnDeliverAsync(m, id).ConfigureAwait(false); break;
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
        var init = StdioConnection.Decode(m, WireJsonContext.Default.HostInitializeParams, out var problem);
        if (init != null && init.Token.Length < 32) problem = "token must have at least 32 characters";
        if (init != null && init.Encoding != "json") problem = "encoding must be \"json\"";
        if (init == null || problem != null)
        {
            await _conn.InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
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
            _conn.Error("[error] " + refusal);
            _ = Task.Run(() => ShutdownAsync(1, orphan: false));
            return false;
        }
        var limits = init.Runtime ?? new RuntimeLimits();
        _events.Configure(TimeSpan.FromMilliseconds(limits.HandlerDeadlineMillisecondsOrDefault),
            (int)Math.Max(1, limits.MaxConcurrentEventsOrDefault), (int)Math.Max(0, limits.QueueCapacityOrDefault));
        _conn.Configure(init.Token, TimeSpan.FromMilliseconds(limits.RequestTimeoutMillisecondsOrDefault),
            (int)Math.Min(int.MaxValue, limits.MaxHeaderLengthOrDefault), (int)Math.Min(int.MaxValue, limits.MaxPayloadLengthOrDefault));
        lock (_lock)
        {
            _init = init;
            _settings = new Settings(init.Settings ?? new Dictionary<string, JsonElement>());
        }
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
                _conn.Log("error", "OnStart failed, stopping: " + e.Message, null, null);
                await ShutdownAsync(1, orphan: false).ConfigureAwait(false);
                return;
            }
        }
        _events.Start();
    }

    private async Task OnCancelAsync(RpcMessage m, JsonElement id)
    {
        var p = StdioConnection.Decode(m, WireJsonContext.Default.EventsCancelParams, out var problem);
        if (p != null && p.Reason is not ("ackTimeout" or "deadline")) problem = "reason must be \"ackTimeout\" or \"deadline\"";
        if (p == null || problem != null)
        {
            await _conn.InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
            return;
        }
        await _conn.RespondAsync(id, new EventsCancelResult { Cancelled = _events.Cancel(p.EventId) }, WireJsonContext.Default.EventsCancelResult).ConfigureAwait(false);
    }

    private async Task OnPingAsync(RpcMessage m, JsonElement id)
    {
        string? nonce = null;
        if (m.Params is { ValueKind: JsonValueKind.Object } p && p.TryGetProperty("nonce", out var n) && n.ValueKind == JsonValueKind.String) nonce = n.GetString();
        var (running, queued) = _events.Counts();
        await _conn.RespondAsync(id, new PluginPingResult { Nonce = nonce, InFlightEvents = running, QueuedEvents = queued }, WireJsonContext.Default.PluginPingResult).ConfigureAwait(false);
    }

    private async Task OnStopAsync(RpcMessage m, JsonElement id)
    {
        var p = new PluginStopParams();
        if (m.Params is { ValueKind: not JsonValueKind.Null })
        {
            p = StdioConnection.Decode(m, WireJsonContext.Default.PluginStopParams, out var problem);
            if (p == null || problem != null)
            {
                await _conn.InvalidParamsAsync(id, m.Method!, "", problem ?? "params are missing").ConfigureAwait(false);
                return;
            }
        }
        await _conn.RespondAsync(id, new PluginStopResult { Accepted = true }, WireJsonContext.Default.PluginStopResult).ConfigureAwait(false);
        if (!_events.TryBeginStop()) return; // from now on events.message is answered Stopping
        _root.Cancel();
        _ = Task.Run(() => ShutdownAsync(0, orphan: false, TimeSpan.FromMilliseconds(Math.Max(0, p.GraceMillisecondsOrDefault))));
    }

    private void OnSettingsChanged(RpcMessage m, JsonElement id)
    {
        var p = StdioConnection.Decode(m, WireJsonContext.Default.SettingsChangedParams, out var problem);
        if (p == null || problem != null)
        {
            _ = _conn.InvalidParamsAsync(id, m.Method!, "settings", problem ?? "params are missing");
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
                    _conn.Log("error", "OnSettingsChanged failed; keeping the previous settings: " + e.Message, null, null);
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
        if (await _events.StopAsync(orphan, grace).ConfigureAwait(false) is not { } started) return;
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
                _conn.Error("[error] OnStop failed: " + e.Message);
            }
        }
        _root.Cancel();
        _conn.FailAll("the plugin stopped");
        _exit.TrySetResult(code);
    }

    private Task<SendResult> CallAsync<T>(string method, T value, System.Text.Json.Serialization.Metadata.JsonTypeInfo<T> type, Target? target, CancellationToken cancellationToken) =>
        _conn.CallAsync(method, value, type, WireJsonContext.Default.SendResult, target, cancellationToken);

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
        var token = _conn.Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": media.upload cannot be sent before host.initialize");
        var begun = await _conn.CallAsync(Catalog.MethodMediaUpload, new MediaUploadParams { Token = token, ContentType = contentType, Size = data.Length, FileName = fileName },
            WireJsonContext.Default.MediaUploadParams, WireJsonContext.Default.MediaUploadResult, null, cancellationToken).ConfigureAwait(false);
        var step = (int)Math.Clamp(begun.MaxChunkBytes, 1, Catalog.LimitMaxMediaChunkBytes);
        for (var offset = 0; offset < data.Length; offset += step)
        {
            cancellationToken.ThrowIfCancellationRequested();
            var chunk = Convert.ToBase64String(data, offset, Math.Min(step, data.Length - offset));
            await _conn.CallAsync(Catalog.MethodMediaChunk, new MediaChunkParams { Token = token, UploadId = begun.UploadId, Offset = offset, Data = chunk },
                WireJsonContext.Default.MediaChunkParams, WireJsonContext.Default.MediaChunkResult, null, cancellationToken).ConfigureAwait(false);
        }
        return await _conn.CallAsync(Catalog.MethodMediaFinish, new MediaFinishParams { Token = token, UploadId = begun.UploadId },
            WireJsonContext.Default.MediaFinishParams, WireJsonContext.Default.MediaFinishResult, null, cancellationToken).ConfigureAwait(false);
    }

    internal Task<SendResult> ReplyAsync(string eventId, MessageReference reference, string format, MessagePart[] parts, Keyboard? keyboard, CancellationToken cancellationToken)
    {
        var target = new Target { Type = reference.TargetType, Id = reference.TargetId };
        var message = PartChecks.Message(parts, format, target, keyboard);
        var token = _conn.Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": messages.reply cannot be sent before host.initialize");
        return CallAsync(Catalog.MethodMessagesReply, new MessagesReplyParams { Token = token, EventId = eventId, Message = message },
            WireJsonContext.Default.MessagesReplyParams, target, cancellationToken);
    }

    internal Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts, string? eventId, CancellationToken cancellationToken)
    {
        var message = new OutgoingMessage { Format = format, Parts = PartChecks.Normalize(parts, format, target) };
        var token = _conn.Token;
        if (token.Length == 0) throw new InvalidOperationException(Catalog.ErrSdkNotInitialized + ": messages.send cannot be sent before host.initialize");
        return CallAsync(Catalog.MethodMessagesSend, new MessagesSendParams { Token = token, Target = target, Message = message, EventId = eventId },
            WireJsonContext.Default.MessagesSendParams, target, cancellationToken);
    }
}
