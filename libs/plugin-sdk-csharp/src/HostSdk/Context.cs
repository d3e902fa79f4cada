using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>Writes log lines to the host's plugin log (log.write), or to stderr before the handshake.</summary>
public sealed class PluginLogger
{
    private readonly Action<string, string, IReadOnlyDictionary<string, JsonElement>?> _write;

    internal PluginLogger(Action<string, string, IReadOnlyDictionary<string, JsonElement>?> write) => _write = write;

    public void Debug(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("debug", message, fields);
    public void Info(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("info", message, fields);
    public void Warn(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("warn", message, fields);
    public void Error(string message, IReadOnlyDictionary<string, JsonElement>? fields = null) => _write("error", message, fields);
}

/// <summary>What every handler gets: settings, directories, logging, sends and a CancellationToken.</summary>
public class PluginContext
{
    private protected readonly StdioRuntime Runtime;

    internal PluginContext(StdioRuntime runtime, Settings settings, CancellationToken cancellationToken)
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

    /// <summary>Sends a plain-text message to a target (messages.send; needs the messages.send permission).</summary>
    public Task<SendResult> SendAsync(Target target, params MessagePart[] parts) => Runtime.SendAsync(target, "text", parts);

    /// <summary>Sends a Markdown message to a target.</summary>
    public Task<SendResult> SendMarkdownAsync(Target target, params MessagePart[] parts) => Runtime.SendAsync(target, "markdown", parts);
}

/// <summary>What a message or command handler gets: the event, replies, and everything of <see cref="PluginContext"/>.</summary>
public sealed class MessageContext : PluginContext
{
    internal MessageContext(StdioRuntime runtime, Settings settings, MessageEvent messageEvent, CancellationToken cancellationToken)
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
}
