using HostSdk.Wire;

namespace HostSdk;

/// <summary>Text parts. Text is never read as provider markup, so it cannot forge a mention.</summary>
public static class Text
{
    /// <summary>A text part; in a Markdown message its Markdown syntax is the plugin's own formatting.</summary>
    public static MessagePart Of(string text) => new MessagePartText { Text = text };

    /// <summary>Text shown exactly as written (Markdown syntax escaped): use it for text that comes from users.</summary>
    public static MessagePart Literal(string text) => new MessagePartText { Text = text, Literal = true };
}

/// <summary>Mention parts.</summary>
public static class Mention
{
    /// <summary>Mentions a user of an event (the sender, or one of its mentions).</summary>
    public static MessagePart User(UserRef user) => new MessagePartMentionUser { Id = user.MentionId, DisplayName = user.DisplayName };

    /// <summary>Mentions a user by a mentionId taken from an event.</summary>
    public static MessagePart User(string mentionId, string? displayName = null) => new MessagePartMentionUser { Id = mentionId, DisplayName = displayName };

    /// <summary>Mentions everyone; needs the messages.mentionEveryone permission and a Markdown message.</summary>
    public static MessagePart Everyone() => new MessagePartMentionEveryone();
}

/// <summary>A message refused locally or by the host; Code is a message.* code of the error catalogue.</summary>
public sealed class MessageException(string code, string message, Target? target = null, bool fromHost = false) : Exception(message)
{
    public string Code { get; } = code;
    public Target? Target { get; } = target;
    public bool FromHost { get; } = fromHost;

    internal static MessageException Of(string code, Target? target, string? detail = null)
    {
        var info = Catalog.LookupError(code);
        return new MessageException(code, detail ?? info?.Message ?? code, target);
    }
}

/// <summary>An error a handler throws to report its own code in events.completed.</summary>
public sealed class HandlerException(string code, string message) : Exception(message)
{
    public string Code { get; } = code;
}

/// <summary>
/// A use of the SDK it refuses, with a code of the SDK catalogue (docs/protocol/v2.md 11), for example
/// <c>SDK_DECISION_CONFLICT</c>; thrown out of a handler, the code is what events.completed reports.
/// </summary>
public sealed class PluginSdkException(string code, string message) : Exception(code + ": " + message)
{
    public string Code { get; } = code;
}

internal static class PartChecks
{
    private const int MaxDepth = 8;

    /// <summary>Flattens composites and checks the parts as the host does before rendering (docs/protocol/v2.md 7.2).</summary>
    public static List<MessagePart> Normalize(IEnumerable<MessagePart> parts, string format, Target? target)
        => NormalizeParts(parts, format, target);

    /// <summary>The message of a reply or send: its parts normalised, and its keyboard (only with Markdown, not with an image).</summary>
    public static OutgoingMessage Message(IEnumerable<MessagePart> parts, string format, Target? target, Keyboard? keyboard)
    {
        var normalized = NormalizeParts(parts, format, target);
        if (keyboard == null) return new OutgoingMessage { Format = format, Parts = normalized };
        var checkedKeyboard = RichChecks.Normalize(keyboard, format, target);
        if (normalized.Any(p => p is MessagePartImage))
            throw MessageException.Of(Catalog.CodeMessageKeyboardUnsupportedFormat, target,
                "the message has an image and a keyboard; QQ Bot shows buttons only under Markdown. Send the buttons in a Markdown message of their own");
        return new OutgoingMessage { Format = format, Parts = normalized, Keyboard = checkedKeyboard };
    }

    private static List<MessagePart> NormalizeParts(IEnumerable<MessagePart> parts, string format, Target? target)
    {
        var output = new List<MessagePart>();
        var media = 0;
        void Walk(IEnumerable<MessagePart> list, int depth)
        {
            foreach (var p in list)
            {
                switch (p)
                {
                    case MessagePartText t:
                        if (output.Count > 0 && output[^1] is MessagePartText last && (last.Literal ?? false) == (t.Literal ?? false))
                            output[^1] = last with { Text = last.Text + t.Text };
                        else output.Add(t);
                        break;
                    case MessagePartMentionUser u:
                        if (string.IsNullOrWhiteSpace(u.Id) || u.Id.IndexOfAny(['<', '>', '"', '\0', '\r', '\n', '\t']) >= 0)
                            throw MessageException.Of(Catalog.CodeMessageMentionInvalidId, target);
                        output.Add(u);
                        break;
                    case MessagePartMentionEveryone e:
                        if (format != "markdown")
                            throw MessageException.Of(Catalog.CodeMessageMentionUnsupportedFormat, target,
                                "an everyone mention needs a Markdown message: send it with ReplyMarkdownAsync or SendMarkdownAsync");
                        output.Add(e);
                        break;
                    case MessagePartImage or MessagePartFile:
                        var (url, mediaId, isFile) = p is MessagePartImage image ? (image.Url, image.MediaId, false) : (((MessagePartFile)p).Url, ((MessagePartFile)p).MediaId, true);
                        if (MediaChecks.SourceProblem(url, mediaId) is { } problem)
                            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, target, $"the {(isFile ? "file" : "image")} part {problem}");
                        if (isFile && target != null)
                            throw MessageException.Of(Catalog.CodeMessagePartUnsupportedTarget, target,
                                "QQ Bot's upload endpoint takes no files yet; send a link to the file in a text part");
                        if (!isFile && target is { Type: not ("group" or "user") })
                            throw MessageException.Of(Catalog.CodeMessagePartUnsupportedTarget, target,
                                $"the host sends images to QQ groups and one-to-one chats only, not to a {target.Type}");
                        media++;
                        output.Add(p);
                        break;
                    case MessagePartComposite c:
                        if (depth >= MaxDepth)
                            throw MessageException.Of(Catalog.CodeMessagePartUnsupported, target, "composites nest more than 8 levels deep; flatten the message");
                        Walk(c.Parts, depth + 1);
                        break;
                    default:
                        throw MessageException.Of(Catalog.CodeMessagePartUnsupported, target);
                }
            }
        }
        Walk(parts, 0);
        if (output.All(p => p is MessagePartText t && string.IsNullOrWhiteSpace(t.Text)))
            throw MessageException.Of(Catalog.CodeMessageEmpty, target);
        if (media > Catalog.LimitMaxMediaParts)
            throw MessageException.Of(Catalog.CodeMessageMediaTooMany, target,
                $"the message has {media} image or file parts; it takes at most {Catalog.LimitMaxMediaParts}. Send one message per file");
        return output;
    }
}
