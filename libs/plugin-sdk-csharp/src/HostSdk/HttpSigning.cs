using System.Security.Cryptography;
using System.Text;
using HostSdk.Wire;

namespace HostSdk.Http;

/// <summary>The outcome of checking the host's signature headers: valid, or a signature.* code (answered 401) and why.</summary>
public sealed record SignatureCheck(bool IsValid, string? Code, string Message, string DeliveryId, long Timestamp)
{
    internal static SignatureCheck Fail(string code, string message) => new(false, code, message, "", 0);
}

/// <summary>
/// The host's request signature (docs/protocol/http-signing.md): "v1=" + lowercase hex HMAC-SHA256, keyed with the
/// secret's UTF-8 bytes, over timestamp + "." + deliveryId + "." + the raw body.
/// </summary>
public static class HostSignature
{
    private const int MaxTimestampDigits = 12;
    private const int MaxDeliveryIdLength = 128;

    /// <summary>The x-host-signature value for these inputs.</summary>
    public static string Sign(string secret, string timestamp, string deliveryId, ReadOnlySpan<byte> rawBody)
    {
        using var mac = IncrementalHash.CreateHMAC(HashAlgorithmName.SHA256, Encoding.UTF8.GetBytes(secret));
        mac.AppendData(Encoding.UTF8.GetBytes($"{timestamp}.{deliveryId}."));
        mac.AppendData(rawBody);
        return Catalog.SignatureVersion + "=" + Convert.ToHexString(mac.GetHashAndReset()).ToLowerInvariant();
    }

    /// <summary>
    /// Steps 1 to 3 of the checks: the three headers present and well formed, the timestamp within the tolerance,
    /// and a signature (of the comma-separated list) matching any secret, compared in constant time. The replay
    /// check is the caller's (<see cref="ReplayGuard"/>), after this one passed.
    /// </summary>
    public static SignatureCheck Verify(string? timestamp, string? deliveryId, string? signature, ReadOnlySpan<byte> rawBody,
        IReadOnlyList<string> secrets, TimeSpan tolerance, DateTimeOffset now)
    {
        var missing = new List<string>();
        if (string.IsNullOrEmpty(deliveryId)) missing.Add(Catalog.HttpHeaderDeliveryId);
        if (string.IsNullOrEmpty(signature)) missing.Add(Catalog.HttpHeaderSignature);
        if (string.IsNullOrEmpty(timestamp)) missing.Add(Catalog.HttpHeaderTimestamp);
        if (missing.Count > 0)
            return SignatureCheck.Fail(Catalog.CodeSignatureMissing, $"missing header(s) {string.Join(", ", missing)}; only requests signed by the host are accepted");
        var candidates = signature!.Split(',').Select(s => s.Trim()).Where(IsWellFormedSignature).ToList();
        if (timestamp!.Length > MaxTimestampDigits || !timestamp.All(char.IsAsciiDigit) || !IsWellFormedDeliveryId(deliveryId!) || candidates.Count == 0)
            return SignatureCheck.Fail(Catalog.CodeSignatureMalformed, "the signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>)");
        var seconds = long.Parse(timestamp, System.Globalization.CultureInfo.InvariantCulture);
        var skew = now.ToUnixTimeMilliseconds() / 1000.0 - seconds;
        if (Math.Abs(skew) > tolerance.TotalSeconds)
            return SignatureCheck.Fail(Catalog.CodeSignatureExpired,
                $"the request was signed {Math.Abs(skew):0} s {(skew < 0 ? "in the future" : "ago")} by this server's clock (tolerance {tolerance.TotalSeconds:0} s); keep both clocks in sync with NTP");
        var valid = false;
        foreach (var secret in secrets)
        {
            var expected = Encoding.ASCII.GetBytes(Sign(secret, timestamp, deliveryId!, rawBody));
            // Every pair is compared, so the time taken does not tell which one matched.
            foreach (var candidate in candidates)
                valid |= CryptographicOperations.FixedTimeEquals(expected, Encoding.ASCII.GetBytes(candidate));
        }
        if (!valid)
            return SignatureCheck.Fail(Catalog.CodeSignatureInvalid, "the signature does not match; configure the signing secret shown when the plugin was registered");
        return new SignatureCheck(true, null, "", deliveryId!, seconds);
    }

    private static bool IsWellFormedSignature(string s) =>
        s.Length == 67 && s.StartsWith("v1=", StringComparison.Ordinal) && s.AsSpan(3).IndexOfAnyExcept("0123456789abcdef") < 0;

    private static bool IsWellFormedDeliveryId(string id) =>
        id.Length <= MaxDeliveryIdLength && id.All(c => char.IsAsciiLetterOrDigit(c) || c is '-' or '_');
}

/// <summary>Delivery ids seen within the tolerance window, at most <c>maxEntries</c> of them (the oldest go first).</summary>
public sealed class ReplayGuard(int maxEntries = 100_000)
{
    private readonly object _lock = new();
    private readonly Dictionary<string, DateTimeOffset> _seen = new(StringComparer.Ordinal);
    private readonly Queue<string> _order = new();

    public int Count
    {
        get
        {
            lock (_lock) return _seen.Count;
        }
    }

    /// <summary>Records the id until <paramref name="expires"/>; false when it was already recorded and has not expired.</summary>
    public bool Remember(string id, DateTimeOffset expires, DateTimeOffset now)
    {
        lock (_lock)
        {
            if (_seen.TryGetValue(id, out var until) && until > now) return false;
            if (!_seen.ContainsKey(id)) _order.Enqueue(id);
            _seen[id] = expires;
            while (_order.Count > 0)
            {
                var first = _order.Peek();
                if (_seen.TryGetValue(first, out var u) && _seen.Count <= maxEntries && u > now) break;
                _seen.Remove(first);
                _order.Dequeue();
            }
            return true;
        }
    }
}

/// <summary>Where an HTTP plugin takes its signing secrets from; asked on every request, so a secret set later needs no restart.</summary>
public static class HostSecrets
{
    /// <summary>A secret file is read whole: a larger one is treated as no secret (and logged by the endpoint).</summary>
    public const int MaxSecretFileBytes = 64 * 1024;

    /// <summary>Fixed secrets.</summary>
    public static Func<IReadOnlyList<string>> Static(params string[] secrets) => () => secrets;

    /// <summary>The secrets in a file, one a line, read again whenever the file changes; a missing file means no secret yet.</summary>
    public static Func<IReadOnlyList<string>> FromFile(string path)
    {
        var gate = new object();
        (DateTime Time, long Size) seen = (default, -1);
        IReadOnlyList<string> cached = [];
        return () =>
        {
            lock (gate)
            {
                var info = new FileInfo(path);
                if (!info.Exists || info.Length > MaxSecretFileBytes) return [];
                if (info.LastWriteTimeUtc == seen.Time && info.Length == seen.Size) return cached;
                try
                {
                    cached = File.ReadAllLines(path).Select(l => l.Trim()).Where(l => l.Length > 0).ToArray();
                }
                catch (IOException)
                {
                    return [];
                }
                seen = (info.LastWriteTimeUtc, info.Length);
                return cached;
            }
        };
    }
}
