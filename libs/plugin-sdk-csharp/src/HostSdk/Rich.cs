using System.Text.RegularExpressions;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>
/// Image and file parts from a URL, and the text parts under the name every SDK shares (docs/protocol/v2.md 5.5, 7.1).
/// </summary>
public static class Parts
{
    /// <summary>A text part (same as <see cref="HostSdk.Text.Of"/>).</summary>
    public static MessagePart Text(string text) => HostSdk.Text.Of(text);

    /// <summary>Text shown exactly as written (same as <see cref="HostSdk.Text.Literal"/>).</summary>
    public static MessagePart Literal(string text) => HostSdk.Text.Literal(text);

    /// <summary>
    /// An image the host has the provider fetch from <paramref name="url"/>, an absolute http or https URL (QQ Bot: PNG or
    /// JPEG, to groups and one-to-one chats); <paramref name="alt"/> is shown where the image cannot be. Any other URL
    /// throws <see cref="MessageException"/> <c>message.part.unsupported</c> at once. One image or file per message.
    /// </summary>
    public static MessagePartImage ImageFromUrl(string url, string? alt = null)
    {
        if (RichChecks.UrlProblem(url) is { } problem)
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, $"ImageFromUrl(\"{url}\"): the URL {problem}");
        if (alt is { Length: > 200 })
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, "ImageFromUrl: alt has more than 200 characters");
        return new MessagePartImage { Url = url, Alt = alt };
    }

    /// <summary>
    /// A file the host has the provider fetch from <paramref name="url"/> (rules as <see cref="ImageFromUrl"/>);
    /// <paramref name="fileName"/> is the name the recipient sees. QQ Bot takes no files yet (message.part.unsupported_target).
    /// </summary>
    public static MessagePartFile FileFromUrl(string url, string? fileName = null)
    {
        if (RichChecks.UrlProblem(url) is { } problem)
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, $"FileFromUrl(\"{url}\"): the URL {problem}");
        if (fileName != null && !RichChecks.NonBlank(fileName, 255))
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, "FileFromUrl: fileName must be 1 to 255 characters, not blank, without control characters");
        return new MessagePartFile { Url = url, FileName = fileName };
    }

    /// <summary>
    /// An image of bytes this plugin uploaded: the answer of <see cref="PluginContext.UploadMediaAsync"/> (uploaded with
    /// an image type; the host refuses others with message.media.type_mismatch). An id that is not this plugin's or has
    /// expired is refused by the host with message.media.unknown when the message is sent.
    /// </summary>
    public static MessagePartImage ImageFromMedia(MediaFinishResult media, string? alt = null) => ImageFromMedia(media.MediaId, alt);

    /// <summary>An image of bytes this plugin uploaded, by the media id media.finish gave (a malformed id throws message.part.unsupported at once).</summary>
    public static MessagePartImage ImageFromMedia(string mediaId, string? alt = null)
    {
        if (MediaChecks.MediaIdProblem(mediaId) is { } problem)
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, $"ImageFromMedia: {problem}");
        if (alt is { Length: > 200 })
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, "ImageFromMedia: alt has more than 200 characters");
        return new MessagePartImage { MediaId = mediaId, Alt = alt };
    }

    /// <summary>
    /// A file of bytes this plugin uploaded (the answer of <see cref="PluginContext.UploadMediaAsync"/>); without
    /// <paramref name="fileName"/> the recipient sees the name given to the upload.
    /// </summary>
    public static MessagePartFile FileFromMedia(MediaFinishResult media, string? fileName = null) => FileFromMedia(media.MediaId, fileName);

    /// <summary>A file of bytes this plugin uploaded, by its media id.</summary>
    public static MessagePartFile FileFromMedia(string mediaId, string? fileName = null)
    {
        if (MediaChecks.MediaIdProblem(mediaId) is { } problem)
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, $"FileFromMedia: {problem}");
        if (fileName != null && !RichChecks.NonBlank(fileName, 255))
            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, null, "FileFromMedia: fileName must be 1 to 255 characters, not blank, without control characters");
        return new MessagePartFile { MediaId = mediaId, FileName = fileName };
    }
}

/// <summary>Buttons of a <see cref="Keyboard"/>; each is checked against the protocol's rules at once (message.keyboard.invalid).</summary>
public static class Buttons
{
    /// <summary>A button whose click the plugin gets as interaction.created with <see cref="EventContext.Data"/> = <paramref name="data"/>.</summary>
    public static Button Callback(string label, string data, string? id = null, bool primary = false) => Make("callback", label, data, id, primary, false);

    /// <summary>A button that opens <paramref name="url"/> (an absolute http or https URL) in the user's client; no event follows.</summary>
    public static Button Link(string label, string url, string? id = null, bool primary = false)
    {
        var button = Make("link", label, url, id, primary, false);
        if (RichChecks.UrlProblem(url) is { } problem)
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, null, $"Buttons.Link(\"{label}\"): the URL \"{url}\" {problem}");
        return button;
    }

    /// <summary>A button that puts <paramref name="text"/> in the user's input box (and sends it at once with <paramref name="send"/>).</summary>
    public static Button Command(string label, string text, bool send = false, string? id = null, bool primary = false) =>
        Make("command", label, text, id, primary, send);

    private static Button Make(string action, string label, string data, string? id, bool primary, bool send)
    {
        var button = new Button { Id = id, Label = label, Style = primary ? "primary" : "secondary", Action = action, Data = data, Send = send ? true : null };
        RichChecks.CheckButton(button, $"Buttons.{char.ToUpperInvariant(action[0])}{action[1..]}(\"{label}\")", null);
        return button;
    }
}

internal static partial class RichChecks
{
    [GeneratedRegex(@"^[A-Za-z0-9_.:-]{1,64}$")]
    private static partial Regex ButtonId();

    /// <summary>Why <paramref name="url"/> cannot be the URL of an image, a file or a link button, or null when it can.</summary>
    public static string? UrlProblem(string? url)
    {
        if (url is null) return "is missing";
        if (url.Length > Catalog.LimitMaxMediaUrlChars) return $"has {url.Length} characters; at most {Catalog.LimitMaxMediaUrlChars} are allowed";
        var rest = url.StartsWith("https://", StringComparison.Ordinal) ? url[8..] : url.StartsWith("http://", StringComparison.Ordinal) ? url[7..] : null;
        if (rest is null || rest.Length == 0 || "/?#".Contains(rest[0]) || rest.Any(char.IsWhiteSpace))
            return "must be an absolute http or https URL without spaces";
        return null;
    }

    public static bool NonBlank(string value, int limit) =>
        value.Length >= 1 && value.Length <= limit && !string.IsNullOrWhiteSpace(value) && !value.Any(c => c < 0x20 || c == 0x7f);

    public static void CheckButton(Button b, string where, Target? target)
    {
        if (b.Id != null && !ButtonId().IsMatch(b.Id))
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where}: the id \"{b.Id}\" is not 1 to 64 letters, digits or _ . : -");
        if (!NonBlank(b.Label ?? "", Catalog.LimitMaxButtonLabelChars))
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target,
                $"{where}: the label must be 1 to {Catalog.LimitMaxButtonLabelChars} characters, not blank, without control characters");
        if (b.Style is not (null or "primary" or "secondary"))
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where}: the style must be \"primary\" or \"secondary\"");
        if (b.Action is not ("callback" or "link" or "command"))
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where}: the action must be \"callback\", \"link\" or \"command\"");
        if (string.IsNullOrEmpty(b.Data) || b.Data.Length > Catalog.LimitMaxButtonDataChars)
            throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where}: the data must be 1 to {Catalog.LimitMaxButtonDataChars} characters");
    }

    /// <summary>
    /// Checks a keyboard against the protocol's limits (docs/protocol/v2.md 7.2 step 8) and gives every button its id
    /// (r&lt;row&gt;c&lt;column&gt; when none) and style. Order: format, size row by row, ids, links.
    /// </summary>
    public static Keyboard Normalize(Keyboard keyboard, string format, Target? target)
    {
        if (format != "markdown")
            throw MessageException.Of(Catalog.CodeMessageKeyboardUnsupportedFormat, target,
                "the message has a keyboard and format \"text\"; send it with ReplyMarkdownAsync or SendMarkdownAsync");
        var rows = keyboard.Rows ?? [];
        if (rows.Count < 1 || rows.Count > Catalog.LimitMaxKeyboardRows)
            throw MessageException.Of(Catalog.CodeMessageKeyboardTooLarge, target, $"the keyboard has {rows.Count} rows; it takes 1 to {Catalog.LimitMaxKeyboardRows}");
        var seen = new Dictionary<string, string>(StringComparer.Ordinal);
        var output = new List<KeyboardRowsItem>();
        for (var r = 0; r < rows.Count; r++)
        {
            var buttons = rows[r].Buttons ?? [];
            if (buttons.Count < 1 || buttons.Count > Catalog.LimitMaxKeyboardButtonsPerRow)
                throw MessageException.Of(Catalog.CodeMessageKeyboardTooLarge, target,
                    $"keyboard.rows[{r}] has {buttons.Count} buttons; a row takes 1 to {Catalog.LimitMaxKeyboardButtonsPerRow}");
            var row = new List<Button>();
            for (var c = 0; c < buttons.Count; c++)
            {
                var b = buttons[c];
                var where = $"keyboard.rows[{r}].buttons[{c}]";
                CheckButton(b, where, target);
                var id = b.Id ?? $"r{r}c{c}";
                if (seen.TryGetValue(id, out var first))
                    throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where} has the id \"{id}\" of {first}");
                seen[id] = where;
                if (b.Action == "link" && UrlProblem(b.Data) != null)
                    throw MessageException.Of(Catalog.CodeMessageKeyboardInvalid, target, $"{where} is a link button whose data \"{b.Data}\" is not an absolute http or https URL");
                row.Add(b with { Id = id, Style = b.Style ?? "secondary", Send = b.Action == "command" && b.Send == true ? true : null });
            }
            output.Add(new KeyboardRowsItem { Buttons = row });
        }
        return new Keyboard { Rows = output };
    }
}
