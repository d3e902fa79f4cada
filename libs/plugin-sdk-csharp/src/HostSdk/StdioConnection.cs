using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>
/// The plugin's end of the stdio connection (docs/protocol/v2.md 3): the framed stream in both directions, the answers
/// to the host's requests, and the plugin's own requests (calls and log lines) matched to the host's answers. It knows
/// nothing of events: <see cref="ReadLoopAsync"/> hands every request of the host to the runtime.
/// </summary>
internal sealed class StdioConnection
{
    private const int MaxPendingLogs = 64;

    private readonly FrameReader _reader;
    private readonly RpcConnection _rpc;
    private readonly TextWriter _stderr;
    private readonly object _lock = new();
    private string _token = "";
    private TimeSpan _timeout = TimeSpan.FromMilliseconds(Catalog.RuntimeDefaultRequestTimeoutMilliseconds);
    private int _pendingLogs;

    public StdioConnection(Stream stdin, Stream stdout, TextWriter stderr)
    {
        _reader = new FrameReader(stdin);
        _rpc = new RpcConnection(new FrameWriter(stdout));
        _stderr = stderr;
    }

    /// <summary>True once the host's end of the stream is gone.</summary>
    public bool IsClosed => _rpc.IsClosed;

    /// <summary>The token of host.initialize ("" before the handshake); every call to the host carries it.</summary>
    public string Token
    {
        get
        {
            lock (_lock) return _token;
        }
    }

    /// <summary>How long a call waits for the host's answer (runtime.requestTimeoutMilliseconds).</summary>
    public TimeSpan RequestTimeout
    {
        get
        {
            lock (_lock) return _timeout;
        }
    }

    /// <summary>Takes the token and limits host.initialize gave.</summary>
    public void Configure(string token, TimeSpan requestTimeout, int maxHeader, int maxPayload)
    {
        lock (_lock)
        {
            _token = token;
            _timeout = requestTimeout;
        }
        _reader.MaxHeader = maxHeader;
        _reader.MaxPayload = maxPayload;
    }

    /// <summary>
    /// Reads frames until the stream ends: an answer goes to the call waiting for it, a request to
    /// <paramref name="onRequest"/> (which answers it; false stops reading). A fault of the SDK in
    /// <paramref name="onRequest"/> is answered with an internal error and reading goes on. Returns the exit code when
    /// the host's stream ended (0) or broke (1), null when <paramref name="onRequest"/> stopped reading.
    /// </summary>
    public async Task<int?> ReadLoopAsync(Func<RpcMessage, JsonElement, Task<bool>> onRequest)
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
                return 1;
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException)
            {
                msg = null;
            }
            if (msg == null) return 0;
            if (msg.Method == null)
            {
                _rpc.Deliver(msg);
                continue;
            }
            if (msg.Id is not { } id) continue; // notifications are not part of v2
            try
            {
                if (!await onRequest(msg, id).ConfigureAwait(false)) return null;
            }
            catch (Exception e)
            {
                // A fault of the SDK itself: answer this request and keep reading, so the host is never left waiting.
                Error($"[error] {msg.Method} failed inside the SDK: {e}");
                await _rpc.RespondErrorAsync(id, Catalog.RpcInternalError, $"{msg.Method} failed inside the plugin's SDK: {e.Message}").ConfigureAwait(false);
            }
        }
    }

    public Task RespondAsync<T>(JsonElement id, T value, JsonTypeInfo<T> type) => _rpc.RespondAsync(id, value, type);

    public Task RespondErrorAsync(JsonElement id, int code, string message, Action<Utf8JsonWriter>? data = null) =>
        _rpc.RespondErrorAsync(id, code, message, data);

    /// <summary>Answers a request whose params are invalid, with one issue at <paramref name="path"/>.</summary>
    public Task InvalidParamsAsync(JsonElement id, string method, string path, string message, string code = "params.field.invalid") =>
        _rpc.RespondErrorAsync(id, Catalog.RpcInvalidParams, $"{method} params are invalid: {message}", w =>
        {
            w.WriteStartArray("issues");
            w.WriteStartObject();
            w.WriteString("code", code);
            w.WriteString("path", path);
            w.WriteString("message", message);
            w.WriteEndObject();
            w.WriteEndArray();
        });

    /// <summary>The params of a request as <typeparamref name="T"/>; default with <paramref name="problem"/> set when they are not.</summary>
    public static T? Decode<T>(RpcMessage m, JsonTypeInfo<T> type, out string? problem)
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

    /// <summary>A request to the host, bounded by the request timeout and <paramref name="cancellationToken"/>; the raw answer.</summary>
    public Task<JsonElement> RequestAsync<T>(string method, T value, JsonTypeInfo<T> type, CancellationToken cancellationToken = default) =>
        _rpc.RequestAsync(method, value, type, RequestTimeout, cancellationToken);

    /// <summary>A plugin-to-host request; a refusal that names a message.* code (error.data.code) is a <see cref="MessageException"/> from the host.</summary>
    public async Task<TResult> CallAsync<T, TResult>(string method, T value, JsonTypeInfo<T> type, JsonTypeInfo<TResult> resultType, Target? target,
        CancellationToken cancellationToken)
    {
        JsonElement raw;
        try
        {
            // Bounded by the request timeout and by the token the context chose: the caller's, linked with the handler's
            // own unless that was cancelled before the call (a cancelled handler may still send its last reply).
            raw = await _rpc.RequestAsync(method, value, type, RequestTimeout, cancellationToken).ConfigureAwait(false);
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

    /// <summary>Fails every call still waiting for the host (the plugin stopped).</summary>
    public void FailAll(string why) => _rpc.FailAll(why);

    /// <summary>A line on stderr, which the host keeps in the plugin's log.</summary>
    public void Error(string line)
    {
        lock (_stderr) { _stderr.WriteLine(line); _stderr.Flush(); }
    }

    /// <summary>log.write, naming <paramref name="eventId"/> (the handler's event) when it is not null.</summary>
    public void Log(string level, string message, IReadOnlyDictionary<string, JsonElement>? fields, string? eventId)
    {
        var line = $"[{level}] {message}";
        var token = Token;
        if (token.Length == 0 || _rpc.IsClosed || Interlocked.Increment(ref _pendingLogs) > MaxPendingLogs)
        {
            if (token.Length != 0 && !_rpc.IsClosed) Interlocked.Decrement(ref _pendingLogs);
            Error(line); // before the handshake, or too many lines wait for the host: keep this one on stderr
            return;
        }
        var call = _rpc.RequestAsync(Catalog.MethodLogWrite, new LogWriteParams { Token = token, Level = level, Message = message, Fields = fields, EventId = eventId },
            WireJsonContext.Default.LogWriteParams, RequestTimeout);
        _ = call.ContinueWith(t =>
        {
            Interlocked.Decrement(ref _pendingLogs);
            if (t.Exception != null) Error(line);
        }, TaskScheduler.Default);
    }
}
