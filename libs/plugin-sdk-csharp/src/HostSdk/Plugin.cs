using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk;

/// <summary>A handler of one message event.</summary>
public delegate Task MessageHandler(MessageContext context);

/// <summary>A handler of an event of another type than message.created (a button click, the bot added or removed, a conversation opened).</summary>
public delegate Task ChatEventHandler(EventContext context);

/// <summary>A handler of a lifecycle step (start, stop, settings change).</summary>
public delegate Task LifecycleHandler(PluginContext context);

/// <summary>Builds a <see cref="Plugin"/>: command and message handlers and lifecycle hooks.</summary>
public sealed class PluginBuilder
{
    private readonly string _pluginId;
    private readonly Dictionary<string, MessageHandler> _commands = new(StringComparer.Ordinal);
    private MessageHandler? _onMessage;
    private LifecycleHandler? _onStart;
    private LifecycleHandler? _onStop;
    private LifecycleHandler? _onSettingsChanged;
    private readonly Dictionary<string, ChatEventHandler> _events = new(StringComparer.Ordinal);
    private string _description = "";
    private bool _intercepts;
    private string? _manifestPath;

    public PluginBuilder(string pluginId)
    {
        if (string.IsNullOrWhiteSpace(pluginId)) throw new ArgumentException(Catalog.ErrSdkDefinitionInvalid + ": the plugin needs a pluginId", nameof(pluginId));
        _pluginId = pluginId;
    }

    /// <summary>Handles the command with this name (as manifest.json declares it; the host matches it).</summary>
    public PluginBuilder Command(string name, MessageHandler handler)
    {
        if (string.IsNullOrWhiteSpace(name)) throw new ArgumentException(Catalog.ErrSdkDefinitionInvalid + ": a command needs a name", nameof(name));
        if (!_commands.TryAdd(name, handler)) throw new ArgumentException(Catalog.ErrSdkDefinitionInvalid + $": command \"{name}\" has two handlers", nameof(name));
        return this;
    }

    /// <summary>Handles every message no command handler takes.</summary>
    public PluginBuilder OnMessage(MessageHandler handler)
    {
        _onMessage = handler;
        return this;
    }

    /// <summary>
    /// Handles interaction.created: a user clicked a callback button of a keyboard the plugin sent
    /// (<see cref="EventContext.Data"/> is the button's data). manifest.json must subscribe to "interaction.created", or
    /// the host never sends it (the handshake is refused when the manifest lacks it).
    /// </summary>
    public PluginBuilder OnInteraction(ChatEventHandler handler) => OnEvent("interaction.created", handler);

    /// <summary>Handles bot.added (the bot was added to a group, or a user added it); manifest.json must subscribe to "bot.added".</summary>
    public PluginBuilder OnBotAdded(ChatEventHandler handler) => OnEvent("bot.added", handler);

    /// <summary>Handles bot.removed, which takes no reply; manifest.json must subscribe to "bot.removed".</summary>
    public PluginBuilder OnBotRemoved(ChatEventHandler handler) => OnEvent("bot.removed", handler);

    /// <summary>Handles conversation.opened (a conversation accepts the bot's messages again); manifest.json must subscribe to it.</summary>
    public PluginBuilder OnConversationOpened(ChatEventHandler handler) => OnEvent("conversation.opened", handler);

    private PluginBuilder OnEvent(string eventType, ChatEventHandler handler)
    {
        if (!_events.TryAdd(eventType, handler)) throw new ArgumentException(Catalog.ErrSdkDefinitionInvalid + $": {eventType} has two handlers", nameof(handler));
        return this;
    }

    public PluginBuilder OnStart(LifecycleHandler handler) { _onStart = handler; return this; }
    public PluginBuilder OnStop(LifecycleHandler handler) { _onStop = handler; return this; }

    /// <summary>Runs when the host changes the settings; <see cref="PluginContext.Settings"/> holds the new ones.</summary>
    public PluginBuilder OnSettingsChanged(LifecycleHandler handler) { _onSettingsChanged = handler; return this; }

    /// <summary>One line shown in the help printed without --host-stdio.</summary>
    public PluginBuilder Description(string text) { _description = text; return this; }

    /// <summary>
    /// Lets handlers call <see cref="MessageContext.Intercept"/> to stop the plugins after this one from getting the
    /// message (docs/protocol/v2.md 6.4). Over stdio the manifest must declare the <c>messages.intercept</c> permission
    /// (the handshake is refused otherwise, <c>SDK_INTERCEPT_PERMISSION_MISSING</c>); over HTTP the manifest served
    /// declares InterceptMessages. The host waits for the decision of a plugin that intercepts before it delivers to
    /// the plugins after it, so decide early (<see cref="MessageContext.Intercept"/> or <see cref="MessageContext.Pass"/>);
    /// without this the SDK sends the decision before the handler even runs.
    /// </summary>
    public PluginBuilder Intercepts(bool intercepts = true) { _intercepts = intercepts; return this; }

    /// <summary>
    /// The manifest.json the stdio runtime checks the plugin against at the handshake (today: the messages.intercept
    /// permission of a plugin that intercepts). Default: manifest.json in the working directory, else beside the program.
    /// </summary>
    public PluginBuilder Manifest(string path) { _manifestPath = path; return this; }

    public Plugin Build() => new(_pluginId, _description, new(_commands), _onMessage, _onStart, _onStop, _onSettingsChanged)
    {
        Intercepts = _intercepts,
        ManifestPath = _manifestPath,
        Events = new(_events),
    };
}

/// <summary>A plugin: run it with <see cref="RunAsync"/> from Main.</summary>
public sealed class Plugin
{
    /// <summary>The exit status without --host-stdio (after the help on stderr).</summary>
    public const int UsageExitCode = 2;
    public const string SdkName = "host-sdk-csharp";
    public const string SdkVersion = "2.0.0";

    internal Plugin(string pluginId, string description, Dictionary<string, MessageHandler> commands, MessageHandler? onMessage,
        LifecycleHandler? onStart, LifecycleHandler? onStop, LifecycleHandler? onSettingsChanged)
    {
        PluginId = pluginId;
        Description = description;
        Commands = commands;
        OnMessage = onMessage;
        OnStart = onStart;
        OnStop = onStop;
        OnSettingsChanged = onSettingsChanged;
    }

    public string PluginId { get; }
    internal string Description { get; }
    internal Dictionary<string, MessageHandler> Commands { get; }
    internal MessageHandler? OnMessage { get; }
    internal LifecycleHandler? OnStart { get; }
    internal LifecycleHandler? OnStop { get; }
    internal LifecycleHandler? OnSettingsChanged { get; }

    /// <summary>True when handlers may intercept (<see cref="PluginBuilder.Intercepts"/>).</summary>
    public bool Intercepts { get; internal init; }

    internal string? ManifestPath { get; init; }

    /// <summary>The handlers of the event types other than message.created, by eventType.</summary>
    internal Dictionary<string, ChatEventHandler> Events { get; init; } = new();

    /// <summary>
    /// Why this plugin cannot run over stdio: it intercepts but the manifest it runs with lacks messages.intercept, so
    /// the host would ignore every interception. Null when it may run (or no manifest is found to check).
    /// </summary>
    internal string? InterceptRefusal()
    {
        if (!Intercepts && Events.Count == 0) return null;
        // Without a manifest of this plugin to read, the host validated the one it started the plugin with.
        if (FindManifest() is not var (path, manifest)) return null;
        var subscribed = (manifest.EventSubscriptions ?? []).Select(s => s.EventType).ToHashSet();
        if (Events.Keys.FirstOrDefault(t => !subscribed.Contains(t)) is { } missing)
            return $"{Catalog.ErrSdkDefinitionInvalid}: plugin \"{PluginId}\" handles \"{missing}\" but {path} does not subscribe to it, so the host would never send it; add {{\"eventType\": \"{missing}\"}} to \"eventSubscriptions\"";
        if (!Intercepts || (manifest.Permissions ?? []).Contains(Catalog.PermissionMessagesIntercept)) return null;
        return $"{Catalog.ErrSdkInterceptPermissionMissing}: plugin \"{PluginId}\" calls .Intercepts() but {path} does not declare the \"{Catalog.PermissionMessagesIntercept}\" permission, so the host would ignore every interception; add it to \"permissions\" (or drop .Intercepts())";
    }

    /// <summary>
    /// The manifest this plugin runs with: <see cref="ManifestPath"/>, else manifest.json in the working directory or
    /// beside the program, the first one that reads as a manifest of this plugin; null when there is none.
    /// </summary>
    internal (string Path, StdioManifest Manifest)? FindManifest()
    {
        var candidates = ManifestPath is { } p ? [p] : new[] { "manifest.json", Path.Combine(AppContext.BaseDirectory, "manifest.json") };
        foreach (var path in candidates)
        {
            StdioManifest? manifest;
            try
            {
                var info = new FileInfo(path);
                if (!info.Exists || info.Length > Catalog.LimitMaxPayloadBytes) continue;
                manifest = JsonSerializer.Deserialize(File.ReadAllBytes(path), WireJsonContext.Default.StdioManifest);
            }
            catch (Exception e) when (e is JsonException or IOException or UnauthorizedAccessException)
            {
                continue; // not a manifest this check can read; the host validated the one it started the plugin with
            }
            if (manifest is null || manifest.PluginId != PluginId) continue;
            return (path, manifest);
        }
        return null;
    }

    internal MessageHandler? HandlerFor(MessageEvent e) =>
        e.Command is { } c && Commands.TryGetValue(c.Name, out var h) ? h : OnMessage;

    /// <summary>
    /// Runs the plugin on the process's streams and returns the exit code for Main. With --host-stdio it speaks the
    /// protocol on stdin/stdout and points Console.Out at stderr, so Console.WriteLine cannot break the frames;
    /// without it, it prints a short help on stderr and returns 2.
    /// </summary>
    public async Task<int> RunAsync(string[] args)
    {
        if (!args.Contains(Catalog.StdioFlag)) return await RunStdioAsync(args, Stream.Null, Stream.Null, Console.Error).ConfigureAwait(false);
        var stdout = Console.OpenStandardOutput();
        Console.SetOut(Console.Error);
        return await RunStdioAsync(args, Console.OpenStandardInput(), stdout, Console.Error).ConfigureAwait(false);
    }

    /// <summary>Runs the stdio runtime over the given streams; the exit code: 0 after plugin.stop or at the end of stdin, 1 on a broken stream or a refused handshake, 2 without --host-stdio.</summary>
    public Task<int> RunStdioAsync(string[] args, Stream stdin, Stream stdout, TextWriter stderr)
    {
        if (!args.Contains(Catalog.StdioFlag))
        {
            var about = Description.Length > 0 ? $" ({Description})" : "";
            stderr.WriteLine($"{PluginId}{about}: a plugin of the chat bot host (protocol v{Catalog.ProtocolVersion}, {SdkName} {SdkVersion}).");
            stderr.WriteLine($"The host starts it with {Catalog.StdioFlag} and speaks JSON-RPC on its stdin and stdout; it is not meant to be run by hand.");
            stderr.WriteLine("Package it with its manifest.json and install the ZIP on the host.");
            stderr.Flush();
            return Task.FromResult(UsageExitCode);
        }
        return new StdioRuntime(this, stdin, stdout, stderr).RunAsync();
    }
}

/// <summary>The settings of a plugin: the host's JSON values by key.</summary>
public sealed class Settings(IReadOnlyDictionary<string, JsonElement> values)
{
    public IReadOnlyDictionary<string, JsonElement> Values { get; } = values;

    public string? GetString(string key) => Values.TryGetValue(key, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;
    public long? GetInt64(string key) => Values.TryGetValue(key, out var v) && v.ValueKind == JsonValueKind.Number && v.TryGetInt64(out var n) ? n : null;
    public bool? GetBoolean(string key) => Values.TryGetValue(key, out var v) && v.ValueKind is JsonValueKind.True or JsonValueKind.False ? v.GetBoolean() : null;
}
