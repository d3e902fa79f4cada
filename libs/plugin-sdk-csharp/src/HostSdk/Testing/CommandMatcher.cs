using System.Text;
using HostSdk.Wire;

namespace HostSdk.Testing;

/// <summary>Matches message text against manifest commands the way the host routes (docs/protocol/v2.md 6.2).</summary>
public static class CommandMatcher
{
    /// <summary>
    /// The command the host would put in the event, and the index of the matched command; (null, -1) when none matches.
    /// The longest prefix + word wins (counted in characters), ties go to the command declared first; case is ignored;
    /// the word must end the text or be followed by whitespace; the arguments are the rest without leading whitespace.
    /// </summary>
    public static (CommandMatch? Match, int Index) Match(string text, IReadOnlyList<Command> commands, string conversation)
    {
        var trimmed = TrimStart(text);
        int bestIndex = -1, bestLength = -1, bestEnd = 0;
        string bestPrefix = "", bestWord = "";
        for (var i = 0; i < commands.Count; i++)
        {
            var c = commands[i];
            if (c.ConversationScopes != null && !c.ConversationScopes.Contains(conversation)) continue;
            foreach (var prefix in c.Prefixes ?? ["/"])
            {
                foreach (var word in new[] { c.Name }.Concat(c.Aliases ?? []))
                {
                    var head = prefix + word;
                    var length = head.EnumerateRunes().Count();
                    if (bestIndex >= 0 && length <= bestLength) continue;
                    var end = StartsWithIgnoringCase(trimmed, head);
                    if (end < 0) continue;
                    if (end < trimmed.Length && !IsSpace(Rune.GetRuneAt(trimmed, end))) continue;
                    (bestIndex, bestLength, bestEnd, bestPrefix, bestWord) = (i, length, end, prefix, word);
                }
            }
        }
        if (bestIndex < 0) return (null, -1);
        return (new CommandMatch { Name = commands[bestIndex].Name, Word = bestWord, Prefix = bestPrefix, Args = TrimStart(trimmed[bestEnd..]) }, bestIndex);
    }

    /// <summary>Whitespace as the host's matcher sees it (JavaScript's \s): Unicode white space and U+FEFF, not U+0085.</summary>
    private static bool IsSpace(Rune r) => r.Value == 0xFEFF || (Rune.IsWhiteSpace(r) && r.Value != 0x85);

    private static string TrimStart(string s)
    {
        var i = 0;
        while (i < s.Length)
        {
            var r = Rune.GetRuneAt(s, i);
            if (!IsSpace(r)) break;
            i += r.Utf16SequenceLength;
        }
        return s[i..];
    }

    /// <summary>The UTF-16 length of text that <paramref name="head"/> covers ignoring case, or -1.</summary>
    private static int StartsWithIgnoringCase(string text, string head)
    {
        var i = 0;
        foreach (var h in head.EnumerateRunes())
        {
            if (i >= text.Length) return -1;
            if (!Rune.TryGetRuneAt(text, i, out var r)) return -1;
            if (Rune.ToLowerInvariant(r) != Rune.ToLowerInvariant(h)) return -1;
            i += r.Utf16SequenceLength;
        }
        return i;
    }
}
