using System.Text.RegularExpressions;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>
/// The checks of an upload the SDK makes before any byte leaves (docs/protocol/v2.md 4.12), and the form of a media id.
/// </summary>
internal static partial class MediaChecks
{
    [GeneratedRegex("^[A-Za-z0-9_-]{16,64}$")]
    private static partial Regex MediaIdPattern();

    /// <summary>Why <paramref name="mediaId"/> cannot be an id media.finish gave, or null when it can.</summary>
    public static string? MediaIdProblem(string mediaId) =>
        MediaIdPattern().IsMatch(mediaId) ? null : $"the mediaId \"{mediaId}\" is not a media id from media.finish (16 to 64 letters, digits, _ or -)";

    /// <summary>Why an image or file part cannot name its bytes (exactly one of url and mediaId), or null when it can.</summary>
    public static string? SourceProblem(string? url, string? mediaId)
    {
        if ((url == null) == (mediaId == null)) return "needs exactly one of \"url\" and \"mediaId\"";
        if (mediaId != null) return MediaIdProblem(mediaId);
        return RichChecks.UrlProblem(url) is { } problem ? $"has the URL \"{url}\", which {problem}" : null;
    }

    /// <summary>
    /// Refuses an upload without the media.upload permission (when the manifest is known), of no bytes, or over the limit.
    /// </summary>
    public static void Check(IReadOnlyList<string>? permissions, ReadOnlySpan<byte> data)
    {
        if (permissions != null && !permissions.Contains(Catalog.PermissionMediaUpload))
            throw MessageException.Of(Catalog.CodeMessagePermissionDenied, null,
                $"UploadMediaAsync needs the \"{Catalog.PermissionMediaUpload}\" permission, which manifest.json does not declare; add it to \"permissions\" and reinstall the plugin");
        if (data.Length == 0)
            throw MessageException.Of(Catalog.CodeMessageMediaUploadInvalid, null, "the upload has no bytes; the host takes 1 byte or more");
        if (data.Length > Catalog.LimitMaxMediaUploadBytes)
            throw MessageException.Of(Catalog.CodeMessageMediaTooLarge, null,
                $"the upload has {data.Length} bytes; the host takes at most {Catalog.LimitMaxMediaUploadBytes}. Send a smaller file, or serve it from a URL");
    }
}
