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
        int headerEnd;
        while (true)
        {
            headerEnd = _buf.AsSpan(_start, _end - _start).IndexOf("\r\n\r\n"u8);
            if (headerEnd >= 0) break;
            if (_end - _start > MaxHeader) throw new FramingException(Catalog.CodeFramingHeaderTooLong, $"the frame header is longer than {MaxHeader} bytes");
            if (await FillAsync(ct).ConfigureAwait(false) == 0)
            {
                if (_end == _start) return null;
                throw new FramingException(Catalog.CodeFramingEofInFrame, "the stream ended inside a frame header");
            }
        }
        if (headerEnd > MaxHeader) throw new FramingException(Catalog.CodeFramingHeaderTooLong, $"the frame header is longer than {MaxHeader} bytes");
        var header = Encoding.Latin1.GetString(_buf, _start, headerEnd);
        _start += headerEnd + 4;
        long length = -1;
        var sawType = false;
        foreach (var line in header.Split("\r\n"))
        {
            var m = HeaderLine().Match(line);
            if (!m.Success) throw new FramingException(Catalog.CodeFramingHeaderMalformed, "a header line is not \"Name: value\"");
            var name = m.Groups[1].Value;
            var value = m.Groups[2].Value;
            if (name.Equals("Content-Length", StringComparison.OrdinalIgnoreCase))
            {
                if (length >= 0) throw new FramingException(Catalog.CodeFramingHeaderDuplicate, "Content-Length appears twice");
                if (value.Length == 0 || value.Length > 15 || !value.All(char.IsAsciiDigit))
                    throw new FramingException(Catalog.CodeFramingContentLengthInvalid, "Content-Length must be a decimal number");
                length = long.Parse(value, System.Globalization.CultureInfo.InvariantCulture);
            }
            else if (name.Equals("Content-Type", StringComparison.OrdinalIgnoreCase))
            {
                if (sawType) throw new FramingException(Catalog.CodeFramingHeaderDuplicate, "Content-Type appears twice");
                sawType = true;
                if (!ContentType().IsMatch(value))
                    throw new FramingException(Catalog.CodeFramingContentTypeUnsupported, "Content-Type must be application/vscode-jsonrpc; charset=utf-8");
            }
            else throw new FramingException(Catalog.CodeFramingHeaderUnknown, $"unknown header {name}");
        }
        if (length < 0) throw new FramingException(Catalog.CodeFramingContentLengthMissing, "the frame has no Content-Length");
        if (length == 0) throw new FramingException(Catalog.CodeFramingPayloadEmpty, "the frame payload is empty");
        if (length > MaxPayload) throw new FramingException(Catalog.CodeFramingPayloadTooLarge, $"the payload of {length} bytes is over the limit of {MaxPayload}");
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

    /// <summary>Decodes one payload into a JSON-RPC message.</summary>
    public static RpcMessage Decode(byte[] payload)
    {
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
        if (root.ValueKind != JsonValueKind.Object
            || !root.TryGetProperty("jsonrpc", out var v) || v.ValueKind != JsonValueKind.String || v.GetString() != "2.0")
            throw new FramingException(Catalog.CodeFramingMessageInvalid, "the payload is not a JSON-RPC 2.0 object");
        JsonElement? Get(string key) => root.TryGetProperty(key, out var p) ? p : null;
        var method = Get("method");
        if (method is { } m && m.ValueKind != JsonValueKind.String)
            throw new FramingException(Catalog.CodeFramingMessageInvalid, "method must be a string");
        var id = Get("id");
        if (id is { ValueKind: JsonValueKind.Null }) id = null;
        if (method is null && id is null) throw new FramingException(Catalog.CodeFramingMessageInvalid, "a response needs an id");
        return new RpcMessage { Id = id, Method = method?.GetString(), Params = Get("params"), Result = Get("result"), Error = Get("error") };
    }
}

/// <summary>Writes Content-Length framed JSON-RPC messages; one frame at a time.</summary>
public sealed class FrameWriter(Stream stream)
{
    private readonly Stream _stream = stream;
    private readonly SemaphoreSlim _lock = new(1, 1);
    private volatile bool _closed;

    public bool IsClosed => _closed;

    public async Task WriteAsync(Action<Utf8JsonWriter> body)
    {
        var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer))
        {
            w.WriteStartObject();
            w.WriteString("jsonrpc", "2.0");
            body(w);
            w.WriteEndObject();
        }
        var header = Encoding.ASCII.GetBytes($"Content-Length: {buffer.Length}\r\n\r\n");
        await _lock.WaitAsync().ConfigureAwait(false);
        try
        {
            if (_closed) return;
            await _stream.WriteAsync(header).ConfigureAwait(false);
            await _stream.WriteAsync(buffer.GetBuffer().AsMemory(0, (int)buffer.Length)).ConfigureAwait(false);
            await _stream.FlushAsync().ConfigureAwait(false);
        }
        catch (IOException)
        {
            _closed = true;
        }
        catch (ObjectDisposedException)
        {
            _closed = true;
        }
        finally
        {
            _lock.Release();
        }
    }
}
