using System.Collections.Concurrent;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace HostSdk;

/// <summary>A JSON-RPC error the host answered to a plugin's request (or a timeout of one).</summary>
public sealed class HostCallException(string method, int code, string message, JsonElement? data = null)
    : Exception($"{method} failed ({code}): {message}")
{
    public string Method { get; } = method;
    public int Code { get; } = code;
    public JsonElement? ErrorData { get; } = data;
}

/// <summary>The JSON-RPC side of a stdio connection: responses, and requests to the peer that wait for answers.</summary>
public sealed class RpcConnection(FrameWriter writer)
{
    private readonly FrameWriter _writer = writer;
    private readonly ConcurrentDictionary<long, (string Method, TaskCompletionSource<JsonElement> Done)> _pending = new();
    private long _nextId;

    public bool IsClosed => _writer.IsClosed;

    public Task RespondAsync<T>(JsonElement id, T value, JsonTypeInfo<T> type) =>
        _writer.WriteAsync(w =>
        {
            w.WritePropertyName("id");
            id.WriteTo(w);
            w.WritePropertyName("result");
            JsonSerializer.Serialize(w, value, type);
        });

    public Task RespondErrorAsync(JsonElement id, int code, string message, Action<Utf8JsonWriter>? data = null) =>
        _writer.WriteAsync(w =>
        {
            w.WritePropertyName("id");
            id.WriteTo(w);
            w.WriteStartObject("error");
            w.WriteNumber("code", code);
            w.WriteString("message", message);
            if (data != null)
            {
                w.WriteStartObject("data");
                data(w);
                w.WriteEndObject();
            }
            w.WriteEndObject();
        });

    /// <summary>Sends a request and waits for its answer, at most <paramref name="timeout"/>.</summary>
    public async Task<JsonElement> RequestAsync<T>(string method, T value, JsonTypeInfo<T> type, TimeSpan timeout, CancellationToken ct = default)
    {
        var id = Interlocked.Increment(ref _nextId);
        var done = new TaskCompletionSource<JsonElement>(TaskCreationOptions.RunContinuationsAsynchronously);
        _pending[id] = (method, done);
        try
        {
            await _writer.WriteAsync(w =>
            {
                w.WriteNumber("id", id);
                w.WriteString("method", method);
                w.WritePropertyName("params");
                JsonSerializer.Serialize(w, value, type);
            }).ConfigureAwait(false);
            if (_writer.IsClosed) throw new HostCallException(method, Wire.Catalog.RpcInternalError, "the host connection is closed");
            try
            {
                return await done.Task.WaitAsync(timeout, ct).ConfigureAwait(false);
            }
            catch (TimeoutException)
            {
                throw new HostCallException(method, Wire.Catalog.RpcRequestTimeout, $"the host did not answer within {timeout.TotalMilliseconds} ms");
            }
        }
        finally
        {
            _pending.TryRemove(id, out _);
        }
    }

    /// <summary>Hands a response from the peer to the request waiting for it; unknown ids are ignored.</summary>
    public void Deliver(RpcMessage message)
    {
        if (message.Id is not { ValueKind: JsonValueKind.Number } idElement || !idElement.TryGetInt64(out var id)) return;
        if (!_pending.TryRemove(id, out var entry)) return;
        if (message.Error is { ValueKind: JsonValueKind.Object } error)
        {
            var code = error.TryGetProperty("code", out var c) && c.TryGetInt32(out var ci) ? ci : Wire.Catalog.RpcInternalError;
            var text = error.TryGetProperty("message", out var m) && m.ValueKind == JsonValueKind.String ? m.GetString()! : "";
            JsonElement? data = error.TryGetProperty("data", out var d) ? d : null;
            entry.Done.TrySetException(new HostCallException(entry.Method, code, text, data));
        }
        else entry.Done.TrySetResult(message.Result ?? default);
    }

    /// <summary>Fails every waiting request (the connection ended).</summary>
    public void FailAll(string why)
    {
        foreach (var (id, entry) in _pending)
            if (_pending.TryRemove(id, out _))
                entry.Done.TrySetException(new HostCallException(entry.Method, Wire.Catalog.RpcInternalError, why));
    }
}
