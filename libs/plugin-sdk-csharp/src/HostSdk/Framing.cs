using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>A broken stdio stream (docs/protocol/v2.md 3.2); Code is a framing.* code of the error catalogue.</summary>
public sealed class FramingException(string code, string message) : Exception(code + ": " + message)
{
    public string Code { get; } = code;
}

/// <summary>One JSON-RPC 2.0 object: a request (Method set) or a response.</summary>
public sealed class RpcMessage
{
    public JsonElement? Id { get; init; }
    public string? Method { get; init; }
    public JsonElement? Params { get; init; }
    public JsonElement? Result { get; init; }
    public JsonElement? Error { get; init; }
}

/// <summary>Reads Content-Length framed JSON-RPC messages with bounded header and payload sizes.</summary>
public sealed partial class FrameReader(Stream stream)
{
    private readonly Stream _stream = stream;
    private byte[] _buf = new byte[64 * 1024];
    private int _start;
    private int _end;

    public int MaxHeader { get; set; } = Catalog.LimitMaxHeaderBytes;
    public int MaxPayload { get; set; } = Catalog.LimitMaxPayloadBytes;

    [GeneratedRegex("^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \\t]*(.*?)[ \\t]*$")]
    private static partial Regex HeaderLine();

    [GeneratedRegex("^application/vscode-jsonrpc\\s*;\\s*charset\\s*=\\s*\"?utf-?8\"?$", RegexOptions.IgnoreCase)]
    private static partial Regex ContentType();

    private async ValueTask<int> FillAsync(CancellationToken ct)
    {
        if (_start == _end) _start = _end = 0;
        if (_end == _buf.Length)
        {
            if (_start > 0)
            {
                Buffer.BlockCopy(_buf, _start, _buf, 0, _end - _start);
                _end -= _start;
                _start = 0;
            }
            else Array.Resize(ref _buf, _buf.Length * 2);
        }
        var n = await _stream.ReadAsync(_buf.AsMemory(_end), ct).ConfigureAwait(false);
        _end += n;
        return n;
    }

    /// <summary>The next message, null at a clean end of stream; throws FramingException on a broken stream.</summary>
    public async Task<RpcMessage?> NextAsync(CancellationToken ct = default)
    {
        // The header block is parsed line by line, so a stray print ("hello\n") is refused at its first line.
        long length = -1;
        var sawType = false;
        var total = 0;
        while (true)
        {
            int newline;
            while ((newline = _buf.AsSpan(_start, _end - _start).IndexOf((byte)'\n')) < 0)
            {
                if (total + (_end - _start) > MaxHeader)
                    throw new FramingException(Catalog.CodeFramingHeaderTooLong, $"the header block is longer than {MaxHeader} bytes");
                if (await FillAsync(ct).ConfigureAwait(false) == 0)
                {
                    if (total == 0 && _end == _start) return null;
                    throw new FramingException(Catalog.CodeFramingEofInFrame, "the stream ended inside a frame header");
                }
            }
            total += newline + 1;
            if (total > MaxHeader) throw new FramingException(Catalog.CodeFramingHeaderTooLong, $"the header block is longer than {MaxHeader} bytes");
            var lineStart = _start;
            _start += newline + 1;
            if (newline == 0 || _buf[lineStart + newline - 1] != (byte)'\r')
                throw new FramingException(Catalog.CodeFramingHeaderMalformed, "a header line does not end with CRLF");
            var line = Encoding.Latin1.GetString(_buf, lineStart, newline - 1);
            if (line.Length == 0) break;
            var m = HeaderLine().Match(line);
            if (!m.Success) throw new FramingException(Catalog.CodeFramingHeaderMalformed, $"header line \"{Clip(line)}\" is not \"Name: value\"");
            var name = m.Groups[1].Value;
            var value = m.Groups[2].Value;
            if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                if (length >= 0) throw new FramingException(Catalog.CodeFramingHeaderDuplicate, "Content-Length appears twice");
                if (value.Length == 0 || value.Length > 10 || !value.All(char.IsAsciiDigit))
                    throw new FramingException(Catalog.CodeFramingContentLengthInvalid, $"Content-Length \"{Clip(value)}\" is not a decimal integer");
                length = long.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (name.Equals("Content-Type", StringComparison.OrdinalIgnoreCase))
            {
                if (sawType) throw new FramingException(Catalog.CodeFramingHeaderDuplicate, "Content-Type appears twice");
                sawType = true;
                if (!ContentType().IsMatch(value))
                    throw new FramingException(Catalog.CodeFramingContentTypeUnsupported, $"Content-Type \"{Clip(value)}\" is not supported");
            }
            else throw new FramingException(Catalog.CodeFramingHeaderUnknown, $"unknown header \"{Clip(name)}\"");
        }
        if (length < 0) throw new FramingException(Catalog.CodeFramingContentLengthMissing, "the frame has no Content-Length header");
        if (length == 0) throw new FramingException(Catalog.CodeFramingPayloadEmpty, "Content-Length is 0");
        if (length > MaxPayload) throw new FramingException(Catalog.CodeFramingPayloadTooLarge, $"Content-Length {length} exceeds {MaxPayload} bytes");
        var payload = new byte[length];
        var have = Math.Min(_end - _start, (int)length);
        Buffer.BlockCopy(_buf, _start, payload, 0, have);
        _start += have;
        while (have < length)
        {
            var n = await _stream.ReadAsync(payload.AsMemory(have), ct).ConfigureAwait(false);
            if (n == 0) throw new FramingException(Catalog.CodeFramingEofInFrame, "the stream ended inside a frame payload");
            have += n;
        }
        return Decode(payload);
    }

    private static string Clip(string s) => s.Length <= 80 ? s : s[..80] + "...";

    private static readonly UTF8Encoding StrictUtf8 = new(false, true);

    private static FramingException Invalid(string message) => new(Catalog.CodeFramingMessageInvalid, message);

    /// <summary>Decodes one payload into a JSON-RPC 2.0 request or response, refusing anything else.</summary>
    public static RpcMessage Decode(byte[] payload)
    {
        try
        {
            StrictUtf8.GetCharCount(payload);
        }
        catch (DecoderFallbackException)
        {
            throw new FramingException(Catalog.CodeFramingUtf8Invalid, "the payload is not valid UTF-8");
        }
        JsonElement root;
        try
        {
            using var doc = JsonDocument.Parse(payload);
            root = doc.RootElement.Clone();
        }
        catch (JsonException e)
        {
            throw new FramingException(Catalog.CodeFramingJsonInvalid, "the payload is not JSON: " + e.Message);
        }
        if (root.ValueKind != JsonValueKind.Object) throw Invalid("the payload is not a JSON object");
        if (!root.TryGetProperty("jsonrpc", out var version) || version.ValueKind != JsonValueKind.String || version.GetString() != "2.0")
            throw Invalid("\"jsonrpc\" must be \"2.0\"");
        JsonElement? Get(string key) => root.TryGetProperty(key, out var p) ? p : null;
        var id = Get("id");
        var idNull = id is { ValueKind: JsonValueKind.Null };
        if (id is { } given && !idNull && !(given.ValueKind == JsonValueKind.String || (given.ValueKind == JsonValueKind.Number && IsInteger(given))))
            throw Invalid("\"id\" must be a string or an integer");
        if (Get("method") is { } method)
        {
            if (method.ValueKind != JsonValueKind.String || method.GetString()!.Length == 0) throw Invalid("\"method\" must be a non-empty string");
            if (idNull) throw Invalid("\"id\" of a request must be a string or an integer");
            return new RpcMessage { Id = id, Method = method.GetString(), Params = Get("params") };
        }
        if (id is null) throw Invalid("a response needs \"id\"");
        var result = Get("result");
        var error = Get("error");
        if ((result is null) == (error is null)) throw Invalid("a response needs exactly one of \"result\" and \"error\"");
        if (error is { } e2 && (e2.ValueKind != JsonValueKind.Object
            || !e2.TryGetProperty("code", out var code) || code.ValueKind != JsonValueKind.Number || !IsInteger(code)
            || !e2.TryGetProperty("message", out var text) || text.ValueKind != JsonValueKind.String))
            throw Invalid("\"error\" must be {code: integer, message: string}");
        return new RpcMessage { Id = id, Result = result, Error = error };
    }

    private static bool IsInteger(JsonElement number) => number.TryGetDouble(out var d) && d == Math.Truncate(d) && !double.IsInfinity(d);
}

/// <summary>Writes Content-Length framed JSON-RPC messages; one frame at a time.</summary>
public sealed class FrameWriter(Stream stream)
{
    private readonly Stream _stream = stream;
    private readonly object _gate = new();
    private List<(byte[] Frame, TaskCompletionSource Done)> _queue = [];
    private bool _draining;
    private volatile bool _closed;

    public bool IsClosed => _closed;

    /// <summary>
    /// Writes one frame. Frames written while another write is under way are queued and go out together in one write
    /// (header and payload of every frame in one buffer), so a burst of replies, ACKs and completions costs one system
    /// call instead of two per frame. The task completes when the frame was handed to the stream (or the stream broke).
    /// </summary>
    public Task WriteAsync(Action<Utf8JsonWriter> body)
    {
        var json = new System.Buffers.ArrayBufferWriter<byte>(512);
        using (var w = new Utf8JsonWriter(json))
        {
            w.WriteStartObject();
            w.WriteString("jsonrpc", "2.0");
            body(w);
            w.WriteEndObject();
        }
        var header = Encoding.ASCII.GetBytes($"Content-Length: {json.WrittenCount}\r\n\r\n");
        var frame = new byte[header.Length + json.WrittenCount];
        header.CopyTo(frame, 0);
        json.WrittenSpan.CopyTo(frame.AsSpan(header.Length));

        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_gate)
        {
            if (_closed) return Task.CompletedTask;
            _queue.Add((frame, done));
            if (_draining) return done.Task;
            _draining = true;
        }
        Drain();
        return done.Task;
    }

    /// <summary>Writes queued frames until the queue is empty; only one caller drains at a time.</summary>
    private void Drain()
    {
        while (true)
        {
            List<(byte[] Frame, TaskCompletionSource Done)> batch;
            lock (_gate)
            {
                if (_queue.Count == 0 || _closed)
                {
                    _draining = false;
                    foreach (var (_, d) in _queue) d.TrySetResult();
                    _queue.Clear();
                    return;
                }
                batch = _queue;
                _queue = [];
            }
            try
            {
                if (batch.Count == 1) _stream.Write(batch[0].Frame);
                else
                {
                    var total = 0;
                    foreach (var (f, _) in batch) total += f.Length;
                    var all = new byte[total];
                    var at = 0;
                    foreach (var (f, _) in batch)
                    {
                        f.CopyTo(all, at);
                        at += f.Length;
                    }
                    _stream.Write(all);
                }
                _stream.Flush();
            }
            catch (Exception e) when (e is IOException or ObjectDisposedException or NotSupportedException)
            {
                _closed = true;
            }
            foreach (var (_, d) in batch) d.TrySetResult();
        }
    }
}
