using System.Collections.Concurrent;
using System.IO.Pipes;
using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Wire;

namespace HostSdk.Testing;

/// <summary>An answer of the plugin to one of the test host's requests.</summary>
public sealed record RpcResponse(JsonElement? Result, int? ErrorCode, string? ErrorMessage, JsonElement? ErrorData)
{
    public bool IsError => ErrorCode != null;
}

/// <summary>A request the plugin sent to the host (messages.reply, messages.send, log.write, events.completed).</summary>
public sealed record RecordedCall(string Method, JsonElement Params);

/// <summary>How the test host answers one of the plugin's requests: a result, or an error (Result null).</summary>
public sealed record HostAnswer(JsonNode? Result, int ErrorCode = 0, string ErrorMessage = "", JsonNode? ErrorData = null);

/// <summary>
/// A host for unit tests: runs the plugin's real stdio runtime over OS pipes, speaks the protocol to it, records
/// what the plugin calls and answers those calls (replies and sends accepted unless <see cref="Answer"/> says otherwise,
/// uploads checked and kept as the host does: <see cref="Uploads"/>, <see cref="Media"/>).
/// </summary>
public sealed class TestHost : IAsyncDisposable
{
    public const string DefaultToken = "test-token-0123456789abcdef0123456789";

    private readonly Stream _toPlugin;
    private readonly Stream _fromPlugin;
    private readonly List<IDisposable> _owned = [];
    private readonly FrameWriter _writer;
    private readonly ConcurrentDictionary<long, TaskCompletionSource<RpcResponse>> _pending = new();
    private readonly List<RecordedCall> _calls = [];
    private readonly StringWriter _stderrText = new();
    private readonly TextWriter _stderr;
    private long _nextId;
    private long _messageIds;

    private TestHost(string pluginId, Stream toPlugin, Stream fromPlugin)
    {
        PluginId = pluginId;
        _toPlugin = toPlugin;
        _fromPlugin = fromPlugin;
        _writer = new FrameWriter(_toPlugin);
        _stderr = TextWriter.Synchronized(_stderrText);
    }

    /// <summary>Starts the plugin's runtime in protocol mode, in this process, over OS pipes.</summary>
    public static TestHost Start(Plugin plugin, params string[] args)
    {
        var toPlugin = new AnonymousPipeServerStream(PipeDirection.Out);
        var pluginIn = new AnonymousPipeClientStream(PipeDirection.In, toPlugin.ClientSafePipeHandle);
        var fromPlugin = new AnonymousPipeServerStream(PipeDirection.In);
        var pluginOut = new AnonymousPipeClientStream(PipeDirection.Out, fromPlugin.ClientSafePipeHandle);
        var host = new TestHost(plugin.PluginId, toPlugin, fromPlugin) { Media = { Permissions = plugin.FindManifest()?.Manifest.Permissions } };
        host._owned.Add(pluginIn);
        host.ExitCode = Task.Run(async () =>
        {
            var code = await plugin.RunStdioAsync(args.Length == 0 ? [Catalog.StdioFlag] : args, pluginIn, pluginOut, host._stderr).ConfigureAwait(false);
            pluginOut.Dispose(); // the process would exit here: the host sees the end of its stdout
            return code;
        });
        host._reader = Task.Run(host.ReadLoopAsync);
        return host;
    }

    /// <summary>
    /// Starts a plugin as a child process (for example <c>dotnet Echo.dll --host-stdio</c>) and speaks the protocol on its
    /// stdin and stdout; its stderr is collected in <see cref="Stderr"/>.
    /// </summary>
    public static TestHost StartProcess(string pluginId, string fileName, params string[] args)
    {
        var info = new System.Diagnostics.ProcessStartInfo(fileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (var a in args) info.ArgumentList.Add(a);
        var process = System.Diagnostics.Process.Start(info) ?? throw new InvalidOperationException("cannot start " + fileName);
        var host = new TestHost(pluginId, process.StandardInput.BaseStream, process.StandardOutput.BaseStream);
        host._owned.Add(process);
        var stderrDone = Task.Run(async () =>
        {
            var buffer = new char[4096];
            int n;
            while ((n = await process.StandardError.ReadAsync(buffer).ConfigureAwait(false)) > 0) host._stderr.Write(buffer, 0, n);
        });
        host.ExitCode = Task.Run(async () =>
        {
            await process.WaitForExitAsync().ConfigureAwait(false);
            await stderrDone.ConfigureAwait(false);
            return process.ExitCode;
        });
        host._reader = Task.Run(host.ReadLoopAsync);
        return host;
    }

    /// <summary>The plugin's id (host.initialize uses it).</summary>
    public string PluginId { get; }

    /// <summary>The plugin's exit code, once it ended.</summary>
    public Task<int> ExitCode { get; private set; } = Task.FromResult(0);

    private Task _reader = Task.CompletedTask;

    /// <summary>What the plugin wrote to stderr so far.</summary>
    public string Stderr => _stderrText.ToString();

    /// <summary>Answers media.upload, media.chunk and media.finish as the host does; set its MaxChunkBytes or Permissions to change how.</summary>
    public TestMediaStore Media { get; } = new();

    /// <summary>The media the plugin uploaded and finished, by media id (<see cref="TestMediaStore.Uploads"/>).</summary>
    public IReadOnlyDictionary<string, TestUpload> Uploads => Media.Uploads;

    /// <summary>Chooses the answer to a call of the plugin; null for the default answer.</summary>
    public Func<RecordedCall, HostAnswer?>? Answer { get; set; }

    public IReadOnlyList<RecordedCall> Calls
    {
        get
        {
            lock (_calls) return [.. _calls];
        }
    }

    /// <summary>Waits until the plugin made a call of this method that matches, at most <paramref name="timeout"/> (default 10 s).</summary>
    public async Task<RecordedCall> WaitForCallAsync(string method, Func<RecordedCall, bool>? match = null, TimeSpan? timeout = null)
    {
        var until = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(10));
        while (true)
        {
            var found = Calls.FirstOrDefault(c => c.Method == method && (match == null || match(c)));
            if (found != null) return found;
            if (DateTime.UtcNow > until) throw new TimeoutException($"the plugin made no {method} call; calls: {string.Join(", ", Calls.Select(c => c.Method))}; stderr: {Stderr}");
            await Task.Delay(5).ConfigureAwait(false);
        }
    }

    /// <summary>The default host.initialize params (the plugin's own id, protocol 2, a token, directories).</summary>
    public JsonObject InitializeParams(JsonObject? runtime = null, JsonObject? settings = null)
    {
        var root = Path.Combine(Path.GetTempPath(), "host-sdk-test", PluginId);
        var p = new JsonObject
        {
            ["supportedProtocolVersions"] = new JsonArray(2),
            ["instanceId"] = "inst-1",
            ["pluginId"] = PluginId,
            ["hostVersion"] = "2.0.0",
            ["directories"] = new JsonObject
            {
                ["pluginDirectory"] = Path.Combine(root, "plugin"),
                ["pluginDataDirectory"] = Path.Combine(root, "data"),
                ["pluginConfigDirectory"] = Path.Combine(root, "config"),
                ["pluginCacheDirectory"] = Path.Combine(root, "cache"),
            },
            ["token"] = DefaultToken,
            ["encoding"] = "json",
        };
        if (runtime != null) p["runtime"] = runtime;
        if (settings != null) p["settings"] = settings;
        return p;
    }

    /// <summary>Sends host.initialize with <see cref="InitializeParams"/> (or the given params).</summary>
    public Task<RpcResponse> InitializeAsync(JsonObject? parameters = null) => RequestAsync(Catalog.MethodHostInitialize, parameters ?? InitializeParams());

    /// <summary>A message event with the given text, in a group, from Alice; with a command match when <paramref name="command"/> is set.</summary>
    public static JsonObject MessageEvent(string eventId, string content, string? command = null, string args = "", string? word = null, string prefix = "/") => new()
    {
        ["eventId"] = eventId,
        ["eventType"] = "message.created",
        ["timestamp"] = "2026-01-01T00:00:00.000Z",
        ["source"] = "test",
        ["bot"] = new JsonObject { ["botAccountId"] = "bot-1", ["platform"] = "test" },
        ["conversation"] = new JsonObject { ["type"] = "group", ["conversationId"] = "group:1" },
        ["sender"] = new JsonObject { ["provider"] = "test", ["mentionId"] = "U-1", ["displayName"] = "Alice" },
        ["message"] = new JsonObject { ["id"] = "msg-" + eventId, ["content"] = content },
        ["messageReference"] = new JsonObject { ["messageId"] = "msg-" + eventId, ["targetType"] = "group", ["targetId"] = "G-1" },
        ["command"] = command == null ? null : new JsonObject { ["name"] = command, ["word"] = word ?? command, ["prefix"] = prefix, ["args"] = args },
    };

    /// <summary>
    /// An event of another type (interaction.created, bot.added, bot.removed, conversation.opened) as the host delivers it
    /// with events.deliver, in the same group as <see cref="MessageEvent"/>, from Alice: bot.removed has no
    /// messageReference, the others one answered by the platform's event id ("event:..."); interaction.created has the
    /// click (<paramref name="data"/>, <paramref name="buttonId"/>).
    /// </summary>
    public static JsonObject ChatEvent(string eventId, string eventType, string data = "", string? buttonId = null)
    {
        var e = new JsonObject
        {
            ["eventId"] = eventId,
            ["eventType"] = eventType,
            ["timestamp"] = "2026-01-01T00:00:00.000Z",
            ["source"] = "test",
            ["bot"] = new JsonObject { ["botAccountId"] = "bot-1", ["platform"] = "test" },
            ["conversation"] = new JsonObject { ["type"] = "group", ["conversationId"] = "group:1" },
            ["sender"] = new JsonObject { ["provider"] = "test", ["mentionId"] = "U-1", ["displayName"] = "Alice" },
        };
        var answered = eventType + ":" + eventId;
        if (eventType == "interaction.created")
        {
            var click = new JsonObject { ["id"] = "click-" + eventId, ["data"] = data };
            if (buttonId != null) click["buttonId"] = buttonId;
            e["interaction"] = click;
            answered = "click-" + eventId;
        }
        if (eventType != "bot.removed")
            e["messageReference"] = new JsonObject { ["messageId"] = "event:" + answered, ["targetType"] = "group", ["targetId"] = "G-1" };
        return e;
    }

    /// <summary>A user clicks a callback button with <paramref name="data"/>: sends events.deliver with interaction.created.</summary>
    public Task<RpcResponse> ClickAsync(string eventId, string data, string? buttonId = null) =>
        RequestAsync(Catalog.MethodEventsDeliver, ChatEvent(eventId, "interaction.created", data, buttonId));

    /// <summary>Sends events.deliver with bot.added.</summary>
    public Task<RpcResponse> BotAddedAsync(string eventId) => RequestAsync(Catalog.MethodEventsDeliver, ChatEvent(eventId, "bot.added"));

    /// <summary>Sends events.deliver with bot.removed (which takes no reply).</summary>
    public Task<RpcResponse> BotRemovedAsync(string eventId) => RequestAsync(Catalog.MethodEventsDeliver, ChatEvent(eventId, "bot.removed"));

    /// <summary>Sends events.deliver with conversation.opened.</summary>
    public Task<RpcResponse> ConversationOpenedAsync(string eventId) => RequestAsync(Catalog.MethodEventsDeliver, ChatEvent(eventId, "conversation.opened"));

    /// <summary>The plugin's manifest commands, used by <see cref="SendMessageAsync"/> to route text as the host does.</summary>
    public IReadOnlyList<Command> Commands { get; set; } = [];

    /// <summary>Sends events.message for a group message with this text, with the command the host would match in <see cref="Commands"/>.</summary>
    public Task<RpcResponse> SendMessageAsync(string eventId, string text)
    {
        var (match, _) = CommandMatcher.Match(text, Commands, "group");
        return RequestAsync(Catalog.MethodEventsMessage, MessageEvent(eventId, text, match?.Name, match?.Args ?? "", match?.Word, match?.Prefix ?? "/"));
    }

    /// <summary>Sends a request and waits for the plugin's answer (at most 10 s).</summary>
    public async Task<RpcResponse> RequestAsync(string method, JsonNode? parameters)
    {
        var id = Interlocked.Increment(ref _nextId);
        var done = new TaskCompletionSource<RpcResponse>(TaskCreationOptions.RunContinuationsAsynchronously);
        _pending[id] = done;
        await _writer.WriteAsync(w =>
        {
            w.WriteNumber("id", id);
            w.WriteString("method", method);
            if (parameters != null)
            {
                w.WritePropertyName("params");
                parameters.WriteTo(w);
            }
        }).ConfigureAwait(false);
        try
        {
            return await done.Task.WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"the plugin did not answer {method}; stderr: {Stderr}");
        }
    }

    /// <summary>Writes raw bytes to the plugin's stdin (for framing tests).</summary>
    public async Task WriteRawAsync(byte[] bytes)
    {
        await _toPlugin.WriteAsync(bytes).ConfigureAwait(false);
        await _toPlugin.FlushAsync().ConfigureAwait(false);
    }

    /// <summary>Closes the plugin's stdin (the host went away).</summary>
    public void CloseInput()
    {
        try
        {
            _toPlugin.Dispose();
        }
        catch (IOException)
        {
            // the plugin is gone already
        }
    }

    private async Task ReadLoopAsync()
    {
        var reader = new FrameReader(_fromPlugin) { MaxPayload = Catalog.LimitMaxPayloadBytes };
        while (true)
        {
            RpcMessage? m;
            try
            {
                m = await reader.NextAsync().ConfigureAwait(false);
            }
            catch (Exception e) when (e is FramingException or IOException or ObjectDisposedException)
            {
                _stderr.WriteLine("[test host] the plugin's stdout broke: " + e.Message);
                m = null;
            }
            if (m == null)
            {
                foreach (var (_, p) in _pending) p.TrySetException(new IOException("the plugin closed its stdout"));
                return;
            }
            if (m.Method == null)
            {
                if (m.Id is { } idElement && idElement.TryGetInt64(out var id) && _pending.TryRemove(id, out var done))
                {
                    int? code = null;
                    string? message = null;
                    JsonElement? data = null;
                    if (m.Error is { ValueKind: JsonValueKind.Object } e)
                    {
                        code = e.GetProperty("code").GetInt32();
                        message = e.GetProperty("message").GetString();
                        data = e.TryGetProperty("data", out var d) ? d : null;
                    }
                    done.TrySetResult(new RpcResponse(m.Result, code, message, data));
                }
                continue;
            }
            var call = new RecordedCall(m.Method, m.Params ?? default);
            lock (_calls) _calls.Add(call);
            if (m.Id is not { } callId) continue;
            var answer = Answer?.Invoke(call) ?? DefaultAnswer(call);
            await _writer.WriteAsync(w =>
            {
                w.WritePropertyName("id");
                callId.WriteTo(w);
                if (answer.Result != null)
                {
                    w.WritePropertyName("result");
                    answer.Result.WriteTo(w);
                }
                else
                {
                    w.WriteStartObject("error");
                    w.WriteNumber("code", answer.ErrorCode);
                    w.WriteString("message", answer.ErrorMessage);
                    if (answer.ErrorData != null)
                    {
                        w.WritePropertyName("data");
                        answer.ErrorData.WriteTo(w);
                    }
                    w.WriteEndObject();
                }
            }).ConfigureAwait(false);
        }
    }

    private HostAnswer DefaultAnswer(RecordedCall call)
    {
        switch (call.Method)
        {
            case Catalog.MethodMessagesReply:
            case Catalog.MethodMessagesSend:
                if (Media.CheckMessage(call) is { } refused) return refused;
                var target = call.Method == Catalog.MethodMessagesSend
                    ? JsonNode.Parse(call.Params.GetProperty("target").GetRawText())
                    : new JsonObject { ["type"] = "group", ["id"] = "G-1" };
                return new HostAnswer(new JsonObject { ["accepted"] = true, ["messageId"] = "m-" + Interlocked.Increment(ref _messageIds), ["target"] = target });
            case Catalog.MethodEventsCompleted:
                return new HostAnswer(new JsonObject { ["recorded"] = true });
            case Catalog.MethodLogWrite:
                return new HostAnswer(new JsonObject { ["accepted"] = true });
            default:
                return Media.Answer(call) ?? new HostAnswer(null, Catalog.RpcMethodNotFound, $"the test host does not know {call.Method}");
        }
    }

    /// <summary>Stops the plugin (closes its stdin) and waits for the runtime to end.</summary>
    public async ValueTask DisposeAsync()
    {
        CloseInput();
        try
        {
            await ExitCode.WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
        }
        try
        {
            await _reader.WaitAsync(TimeSpan.FromSeconds(10)).ConfigureAwait(false);
        }
        catch (TimeoutException)
        {
        }
        _fromPlugin.Dispose();
        foreach (var o in _owned)
        {
            if (o is System.Diagnostics.Process p && !p.HasExited) p.Kill();
            o.Dispose();
        }
    }
}
