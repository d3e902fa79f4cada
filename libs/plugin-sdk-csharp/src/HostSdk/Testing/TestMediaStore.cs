using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using HostSdk.Wire;

namespace HostSdk.Testing;

/// <summary>Media a plugin uploaded to the <see cref="TestHost"/>: the bytes, what the upload declared, and the decoded size of each chunk in order.</summary>
public sealed record TestUpload(string MediaId, string ContentType, string? FileName, byte[] Bytes, IReadOnlyList<int> Chunks);

/// <summary>
/// The host's side of media.upload, media.chunk and media.finish for tests (docs/protocol/v2.md 4.12): it answers each
/// call as the host does and keeps what it took. <see cref="TestHost"/> answers with one (<see cref="TestHost.Media"/>); a
/// test that plays the host itself can call <see cref="Answer"/> with the plugin's calls.
/// </summary>
public sealed class TestMediaStore
{
    private readonly object _mediaLock = new();
    private readonly Dictionary<string, OpenUpload> _openUploads = new(StringComparer.Ordinal);
    private readonly Dictionary<string, TestUpload> _uploads = new(StringComparer.Ordinal);
    private int _uploadIds;

    private sealed class OpenUpload(string contentType, string? fileName, long size)
    {
        public string ContentType { get; } = contentType;
        public string? FileName { get; } = fileName;
        public long Size { get; } = size;
        public MemoryStream Bytes { get; } = new();
        public List<int> Chunks { get; } = [];
    }

    /// <summary>
    /// The permissions of the plugin's manifest, which the test host checks as the host does (media.upload); null permits
    /// every call. <see cref="TestHost.Start"/> reads them from the manifest the plugin runs with.
    /// </summary>
    public IReadOnlyList<string>? Permissions { get; set; }

    /// <summary>The maxChunkBytes media.upload answers (default the protocol's 512 KiB); set it lower to see a small file go in several chunks.</summary>
    public int MaxChunkBytes { get; set; } = Catalog.LimitMaxMediaChunkBytes;

    /// <summary>The media the plugin uploaded and finished, by media id, each checked as the host checks it.</summary>
    public IReadOnlyDictionary<string, TestUpload> Uploads
    {
        get
        {
            lock (_mediaLock) return new Dictionary<string, TestUpload>(_uploads, StringComparer.Ordinal);
        }
    }

    private static readonly string[] UploadImageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp"];

    // The host's checks by first bytes (libs/protocol/src/media-types.ts).
    private static readonly Dictionary<string, Func<byte[], bool>> Signatures = new(StringComparer.Ordinal)
    {
        ["image/png"] = h => h.AsSpan().StartsWith(new byte[] { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a }),
        ["image/jpeg"] = h => h.AsSpan().StartsWith(new byte[] { 0xff, 0xd8, 0xff }),
        ["image/gif"] = h => h.AsSpan().StartsWith("GIF87a"u8) || h.AsSpan().StartsWith("GIF89a"u8),
        ["image/webp"] = h => h.Length >= 12 && h.AsSpan(0, 4).SequenceEqual("RIFF"u8) && h.AsSpan(8, 4).SequenceEqual("WEBP"u8),
        ["application/pdf"] = h => h.AsSpan().StartsWith("%PDF-"u8),
    };

    /// <summary>Why the host refuses <paramref name="contentType"/> for bytes starting with <paramref name="head"/> (null head: the type alone), or null.</summary>
    private static string? MediaTypeProblem(string contentType, byte[]? head)
    {
        if (contentType.StartsWith("image/", StringComparison.Ordinal) && !UploadImageTypes.Contains(contentType))
            return $"the host takes images as {string.Join(", ", UploadImageTypes)}, not {contentType}; convert the image, or upload it as a file";
        if (head != null && Signatures.TryGetValue(contentType, out var check) && !check(head))
            return $"the upload declares {contentType}, but its bytes do not start with the {contentType} signature; declare the type the bytes have";
        return null;
    }

    private static readonly Regex ContentTypePattern = new("^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$");

    private static HostAnswer Rejected(string code, string message) =>
        new(null, Catalog.RpcMessageRejected, message, new JsonObject { ["code"] = code });

    private static HostAnswer InvalidParams(string message) => new(null, Catalog.RpcInvalidParams, message);

    /// <summary>
    /// The host's answer to media.upload, media.chunk or media.finish (docs/protocol/v2.md 4.12): the declared size,
    /// chunks in order at the offset received so far and at most <see cref="MaxChunkBytes"/>, the first bytes against the
    /// declared type on finish; a refused chunk or finish drops the upload. Null for another method.
    /// </summary>
    public HostAnswer? Answer(RecordedCall call)
    {
        if (call.Method is not (Catalog.MethodMediaUpload or Catalog.MethodMediaChunk or Catalog.MethodMediaFinish)) return null;
        if (Permissions != null && !Permissions.Contains(Catalog.PermissionMediaUpload))
            return new HostAnswer(null, Catalog.RpcPermissionDenied, Catalog.PermissionMediaUpload + " is not declared",
                new JsonObject { ["code"] = Catalog.CodeMessagePermissionDenied, ["permission"] = Catalog.PermissionMediaUpload });
        lock (_mediaLock)
        {
            var p = call.Params;
            string? Str(string name) => p.ValueKind == JsonValueKind.Object && p.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;
            long? Int(string name) => p.ValueKind == JsonValueKind.Object && p.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.Number && v.TryGetInt64(out var n) ? n : null;
            switch (call.Method)
            {
                case Catalog.MethodMediaUpload:
                {
                    var contentType = Str("contentType");
                    var size = Int("size");
                    var hasName = p.ValueKind == JsonValueKind.Object && p.TryGetProperty("fileName", out _);
                    var fileName = Str("fileName");
                    if (contentType is not { Length: <= 127 } || !ContentTypePattern.IsMatch(contentType) || size is not >= 1
                        || (hasName && fileName is not { Length: >= 1 and <= 255 }))
                        return InvalidParams("media.upload params are invalid: contentType must be a lowercase type/subtype, size at least 1, fileName 1 to 255 characters");
                    if (size > Catalog.LimitMaxMediaUploadBytes)
                        return Rejected(Catalog.CodeMessageMediaTooLarge, $"the upload declares {size} bytes; the host takes at most {Catalog.LimitMaxMediaUploadBytes}");
                    if (MediaTypeProblem(contentType, null) is { } problem) return Rejected(Catalog.CodeMessageMediaTypeMismatch, problem);
                    var id = $"test-upload-{++_uploadIds:D6}";
                    _openUploads[id] = new OpenUpload(contentType, fileName, size.Value);
                    return new HostAnswer(new JsonObject { ["uploadId"] = id, ["maxChunkBytes"] = MaxChunkBytes });
                }
                case Catalog.MethodMediaChunk:
                {
                    var id = Str("uploadId") ?? "";
                    var offset = Int("offset");
                    var data = Str("data");
                    if (offset is not >= 0 || data == null) return InvalidParams("media.chunk params are invalid: uploadId, offset (at least 0) and data (base64) are required");
                    if (!_openUploads.TryGetValue(id, out var u))
                        return Rejected(Catalog.CodeMessageMediaUnknown, $"the upload \"{id}\" is not known (never begun, finished or dropped)");
                    byte[]? bytes = null;
                    try
                    {
                        bytes = Convert.FromBase64String(data);
                    }
                    catch (FormatException)
                    {
                    }
                    var refusal = bytes == null ? Rejected(Catalog.CodeMessageMediaUploadInvalid, "data is not base64 with padding")
                        : offset != u.Bytes.Length ? Rejected(Catalog.CodeMessageMediaUploadInvalid, $"the chunk starts at offset {offset}; the host has {u.Bytes.Length} bytes of the upload")
                        : bytes.Length > MaxChunkBytes ? Rejected(Catalog.CodeMessageMediaTooLarge, $"the chunk has {bytes.Length} bytes; at most {MaxChunkBytes} are allowed")
                        : u.Bytes.Length + bytes.Length > u.Size ? Rejected(Catalog.CodeMessageMediaTooLarge, $"the chunks pass the declared size of {u.Size} bytes")
                        : null;
                    if (refusal != null)
                    {
                        _openUploads.Remove(id);
                        return refusal;
                    }
                    u.Bytes.Write(bytes);
                    u.Chunks.Add(bytes!.Length);
                    return new HostAnswer(new JsonObject { ["received"] = u.Bytes.Length });
                }
                default:
                {
                    var id = Str("uploadId") ?? "";
                    if (!_openUploads.Remove(id, out var u))
                        return Rejected(Catalog.CodeMessageMediaUnknown, $"the upload \"{id}\" is not known (never begun, finished or dropped)");
                    var bytes = u.Bytes.ToArray();
                    if (bytes.Length != u.Size)
                        return Rejected(Catalog.CodeMessageMediaUploadInvalid, $"media.finish came after {bytes.Length} of the {u.Size} declared bytes");
                    if (MediaTypeProblem(u.ContentType, bytes[..Math.Min(16, bytes.Length)]) is { } problem)
                        return Rejected(Catalog.CodeMessageMediaTypeMismatch, problem);
                    var mediaId = $"test-media-{_uploads.Count + 1:D6}";
                    _uploads[mediaId] = new TestUpload(mediaId, u.ContentType, u.FileName, bytes, u.Chunks.ToArray());
                    var expires = DateTime.UtcNow.AddMilliseconds(Catalog.LimitMediaTtlMilliseconds).ToString("yyyy-MM-ddTHH:mm:ss.fffZ", System.Globalization.CultureInfo.InvariantCulture);
                    return new HostAnswer(new JsonObject { ["mediaId"] = mediaId, ["contentType"] = u.ContentType, ["size"] = bytes.Length, ["expiresAt"] = expires });
                }
            }
        }
    }

    /// <summary>
    /// The host's check of the media ids a message (messages.reply, messages.send) names before sending it: each one this plugin uploaded, and an image
    /// part's of an image type. Null when the message names none or all are fine.
    /// </summary>
    public HostAnswer? CheckMessage(RecordedCall call)
    {
        if (call.Params.ValueKind != JsonValueKind.Object || !call.Params.TryGetProperty("message", out var message)
            || message.ValueKind != JsonValueKind.Object || !message.TryGetProperty("parts", out var parts) || parts.ValueKind != JsonValueKind.Array)
            return null;
        var i = 0;
        foreach (var part in parts.EnumerateArray())
        {
            var at = i++;
            if (part.ValueKind != JsonValueKind.Object || !part.TryGetProperty("mediaId", out var idElement) || idElement.ValueKind != JsonValueKind.String) continue;
            var id = idElement.GetString()!;
            TestUpload? kept;
            lock (_mediaLock) _uploads.TryGetValue(id, out kept);
            if (kept == null)
                return Rejected(Catalog.CodeMessageMediaUnknown, $"parts[{at}] names the media id \"{id}\", which this plugin did not upload (or it expired)");
            var isImage = part.TryGetProperty("type", out var type) && type.ValueKind == JsonValueKind.String && type.GetString() == "image";
            if (isImage && !kept.ContentType.StartsWith("image/", StringComparison.Ordinal))
                return Rejected(Catalog.CodeMessageMediaTypeMismatch, $"parts[{at}] is an image of media uploaded as {kept.ContentType}");
        }
        return null;
    }
}
