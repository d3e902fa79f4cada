using System.Text.Json;
using HostSdk.Wire;
using Microsoft.Extensions.Logging;

namespace HostSdk;

/// <summary>
/// Writes log lines to the host's plugin log (log.write), or to stderr before the handshake. It is an
/// <see cref="ILogger"/>: <c>ctx.Log.LogInformation("saw {User}", name)</c> sends the formatted message with the
/// template's values as fields (as strings), and an exception's type and message.
/// </summary>
public sealed class PluginLogger : ILogger
{
    private readonly Action<string, string, IReadOnlyDictionary<string, JsonElement>?> _write;

    internal PluginLogger(Action<string, string, IReadOnlyDictionary<string, JsonElement>?> write) => _write = write;

    public void Debug(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("debug", message, fields);
    public void Info(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("info", message, fields);
    public void Warn(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("warn", message, fields);
    public void Error(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("error", message, fields);

    public bool IsEnabled(LogLevel logLevel) => logLevel != LogLevel.None;

    public IDisposable? BeginScope<TState>(TState state) where TState : notnull => null;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        if (!IsEnabled(logLevel)) return;
        var level = logLevel switch
        {
            LogLevel.Trace or LogLevel.Debug => "debug",
            LogLevel.Information => "info",
            LogLevel.Warning => "warn",
            _ => "error",
        };
        var message = formatter(state, exception);
        if (exception != null) message += $" ({exception.GetType().Name}: {exception.Message})";
        Dictionary<string, JsonElement>? fields = null;
        if (state is IEnumerable<KeyValuePair<string, object?>> values)
        {
            foreach (var (key, value) in values)
            {
                if (key == "{OriginalFormat}") continue;
                fields ??= new Dictionary<string, JsonElement>(StringComparer.Ordinal);
                fields[key] = StringElement(Convert.ToString(value, System.Globalization.CultureInfo.InvariantCulture) ?? "");
            }
        }
        _write(level, message, fields);
    }

    private static JsonElement StringElement(string text)
    {
        var buffer = new MemoryStream();
        using (var w = new Utf8JsonWriter(buffer)) w.WriteStringValue(text);
        using var doc = JsonDocument.Parse(buffer.ToArray());
        return doc.RootElement.Clone();
    }
}

/// <summary>What a context needs of the transport it runs on (the stdio runtime, or one HTTP event).</summary>
internal interface IPluginTransport
{
    HostInitializeParamsDirectories Directories { get; }
    PluginLogger Logger { get; }
    Task<SendResult> ReplyAsync(MessageEvent e, string format, MessagePart[] parts);
    Task<SendResult> SendAsync(Target target, string format, MessagePart[] parts);
}

/// <summary>What every handler gets: settings, directories, logging, sends and a CancellationToken.</summary>
public class PluginContext
{
    private protected readonly IPluginTransport Runtime;

    internal PluginContext(IPluginTransport runtime, Settings settings, CancellationToken cancellationToken)
    {
        Runtime = runtime;
        Settings = settings;
        CancellationToken = cancellationToken;
    }

    /// <summary>Cancelled when the plugin stops, and for a message handler also on events.cancel and at the handler deadline.</summary>
    public CancellationToken CancellationToken { get; }

    public Settings Settings { get; }

    /// <summary>The plugin's directories as host.initialize gave them.</summary>
    public HostInitializeParamsDirectories Directories => Runtime.Directories;

    public PluginLogger Log => Runtime.Logger;

    /// <summary>
    /// Sends a plain-text message to a target (messages.send; needs the messages.send permission). In a message handler a
    /// target without <c>BotAccountId</c> is sent by the bot that received the event; outside one, a host with several
    /// bots needs it (message.target.bot_required).
    /// </summary>
    public Task<SendResult> SendAsync(Target target, params MessagePart[] parts) => Runtime.SendAsync(Route(target), "text", parts);

    /// <summary>Sends a Markdown message to a target (the bot as for <see cref="SendAsync"/>).</summary>
    public Task<SendResult> SendMarkdownAsync(Target target, params MessagePart[] parts) => Runtime.SendAsync(Route(target), "markdown", parts);

    /// <summary>The target a send goes to (protocol v2 4.7): as given outside a message handler.</summary>
    private protected virtual Target Route(Target target) => target;
}

/// <summary>What a message or command handler gets: the event, replies, and everything of <see cref="PluginContext"/>.</summary>
public sealed class MessageContext : PluginContext
{
    internal MessageContext(IPluginTransport runtime, Settings settings, MessageEvent messageEvent, CancellationToken cancellationToken)
        : base(runtime, settings, cancellationToken) => Event = messageEvent;

    public MessageEvent Event { get; }
    public MessageEventMessage Message => Event.Message;
    public UserRef Sender => Event.Sender;

    /// <summary>The matched command, or null for a plain message.</summary>
    public CommandMatch? Command => Event.Command;

    /// <summary>The command's arguments ("" for a plain message).</summary>
    public string Args => Event.Command?.Args ?? "";

    /// <summary>Replies in plain text where the message came from.</summary>
    public Task<SendResult> ReplyAsync(params MessagePart[] parts) => Runtime.ReplyAsync(Event, "text", parts);

    /// <summary>Replies in Markdown (needed for an everyone mention).</summary>
    public Task<SendResult> ReplyMarkdownAsync(params MessagePart[] parts) => Runtime.ReplyAsync(Event, "markdown", parts);

    /// <summary>A send from this handler speaks as the bot that received the event unless the target names one.</summary>
    private protected override Target Route(Target target) =>
        target is { BotAccountId: null } ? target with { BotAccountId = Event.Bot.BotAccountId } : target;
}
