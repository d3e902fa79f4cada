using System.IO.Compression;
using System.Security.Cryptography;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;

namespace HostSdk.Pack;

/// <summary>A refusal of the packer, with a stable code the MSBuild error and the tests name.</summary>
public sealed class PackException(string code, string message) : Exception(message)
{
    public string Code { get; } = code;
}

/// <summary>
/// The packer's error codes with what to do about each (the SDK's README lists the same; a test checks both ways).
/// The MSBuild targets add HOSTSDK001 to HOSTSDK004 for what they check before running the packer.
/// </summary>
public static class PackErrors
{
    public const string Usage = "pack.usage";
    public const string ManifestMissing = "pack.manifest_missing";
    public const string ManifestInvalid = "pack.manifest_invalid";
    public const string TransportNotStdio = "pack.transport_not_stdio";
    public const string PublishMissing = "pack.publish_missing";

    public static readonly IReadOnlyDictionary<string, string> Fixes = new Dictionary<string, string>
    {
        [Usage] = "The packer's command line is not valid. The targets run it for you; by hand, pass --publish-dir, --manifest, --assembly and --out.",
        [ManifestMissing] = "No manifest.json where HostPluginManifest points. Put manifest.json beside the project file or set HostPluginManifest.",
        [ManifestInvalid] = "manifest.json is not a JSON object with a valid pluginId (or is over 1 MiB). Fix it; host-plugin validate lists every field.",
        [TransportNotStdio] = "The manifest is for the HTTP transport. HTTP plugins are registered by their base URL, not uploaded; set HostPackagePluginOnPublish to false.",
        [PublishMissing] = "The publish folder lacks <AssemblyName>.dll, .deps.json or .runtimeconfig.json. Publish a framework-dependent executable (OutputType Exe).",
    };
}

/// <summary>What to pack.</summary>
public sealed record PackRequest(string PublishDir, string ManifestPath, string AssemblyName, string OutputPath)
{
    /// <summary>The time written into every ZIP entry; a fixed time makes the same inputs give the same bytes.</summary>
    public DateTimeOffset EntryTime { get; init; } = PluginPacker.DefaultEntryTime;
}

/// <summary>What was packed.</summary>
public sealed record PackResult(string OutputPath, string PluginId, IReadOnlyList<string> Entries, long Bytes, string Sha256);

/// <summary>Builds the plugin ZIP from a publish folder.</summary>
public static partial class PluginPacker
{
    /// <summary>1980-01-02, the earliest time every ZIP reader shows the same way (SOURCE_DATE_EPOCH overrides it).</summary>
    public static readonly DateTimeOffset DefaultEntryTime = new(1980, 1, 2, 0, 0, 0, TimeSpan.Zero);

    /// <summary>The manifest is read whole: a bigger one is refused before parsing.</summary>
    public const int MaxManifestBytes = 1024 * 1024;

    /// <summary>PLUGIN_ID_PATTERN of libs/protocol/src/common.ts (at most 100 characters).</summary>
    [GeneratedRegex("^[a-z][a-z0-9_-]*(?:\\.[a-z][a-z0-9_-]*)+$")]
    private static partial Regex PluginIdPattern();

    public static int Run(string[] args, TextWriter stdout, TextWriter stderr)
    {
        string? publishDir = null, manifest = null, assembly = null, output = null;
        for (var i = 0; i < args.Length; i++)
        {
            string Next() => i + 1 < args.Length ? args[++i] : throw new PackException(PackErrors.Usage, $"{args[i]} needs a value");
            try
            {
                switch (args[i])
                {
                    case "--publish-dir": publishDir = Next(); break;
                    case "--manifest": manifest = Next(); break;
                    case "--assembly": assembly = Next(); break;
                    case "--out": output = Next(); break;
                    default: throw new PackException(PackErrors.Usage, $"unknown argument {args[i]}");
                }
            }
            catch (PackException e)
            {
                return Usage(stderr, e.Message);
            }
        }
        if (publishDir is null || manifest is null || assembly is null || output is null)
            return Usage(stderr, "--publish-dir, --manifest, --assembly and --out are required");
        try
        {
            var request = new PackRequest(publishDir, manifest, assembly, output) { EntryTime = EntryTimeFromEnvironment() };
            var result = Pack(request);
            stdout.WriteLine($"Packed {result.PluginId}: {result.Entries.Count} files, {result.Bytes} bytes");
            stdout.WriteLine($"  {result.OutputPath}");
            stdout.WriteLine($"  sha256 {result.Sha256}");
            return 0;
        }
        catch (PackException e)
        {
            // MSBuild's canonical error format, so `dotnet publish` shows it as a build error with its code.
            stderr.WriteLine($"{Path.GetFullPath(manifest)}: error {e.Code}: {e.Message} (fix: {PackErrors.Fixes[e.Code]})");
            return 1;
        }
    }

    private static int Usage(TextWriter stderr, string why)
    {
        stderr.WriteLine($"HostSdk.Pack: error {PackErrors.Usage}: {why}");
        stderr.WriteLine("usage: dotnet HostSdk.Pack.dll --publish-dir <dir> --manifest <manifest.json> --assembly <name> --out <zip>");
        return 2;
    }

    private static DateTimeOffset EntryTimeFromEnvironment()
    {
        var epoch = Environment.GetEnvironmentVariable("SOURCE_DATE_EPOCH");
        if (string.IsNullOrEmpty(epoch)) return DefaultEntryTime;
        if (!long.TryParse(epoch, out var seconds) || seconds < 315619200 || seconds > 4102444800)
            throw new PackException(PackErrors.Usage, $"SOURCE_DATE_EPOCH \"{epoch}\" is not a Unix time between 1980 and 2100");
        return DateTimeOffset.FromUnixTimeSeconds(seconds);
    }

    /// <summary>The manifest with its stdio transport pointed at the published assembly.</summary>
    public static JsonObject RewriteManifest(string manifestPath, string assemblyName)
    {
        if (!File.Exists(manifestPath))
            throw new PackException(PackErrors.ManifestMissing, $"{manifestPath} does not exist; put manifest.json in the project folder or set HostPluginManifest");
        var info = new FileInfo(manifestPath);
        if (info.Length > MaxManifestBytes)
            throw new PackException(PackErrors.ManifestInvalid, $"{manifestPath} is {info.Length} bytes; a manifest has at most {MaxManifestBytes}");
        JsonNode? node;
        try
        {
            node = JsonNode.Parse(File.ReadAllBytes(manifestPath), documentOptions: new JsonDocumentOptions { MaxDepth = 64 });
        }
        catch (JsonException e)
        {
            throw new PackException(PackErrors.ManifestInvalid, $"{manifestPath} is not JSON: {e.Message}");
        }
        if (node is not JsonObject manifest) throw new PackException(PackErrors.ManifestInvalid, $"{manifestPath} is not a JSON object");
        var pluginId = manifest["pluginId"] is JsonValue id && id.TryGetValue<string>(out var s) ? s : null;
        if (pluginId is null || pluginId.Length > 100 || !PluginIdPattern().IsMatch(pluginId))
            throw new PackException(PackErrors.ManifestInvalid, $"{manifestPath}: pluginId must be a lowercase dotted identifier of at most 100 characters, such as com.example.echo");
        var transport = manifest["transport"] as JsonObject;
        var type = transport?["type"] is JsonValue t && t.TryGetValue<string>(out var ts) ? ts : null;
        if (type is not null && type != "stdio-jsonrpc")
            throw new PackException(PackErrors.TransportNotStdio, $"{manifestPath}: transport.type is \"{type}\"; only stdio plugins are uploaded as a ZIP (an HTTP plugin is registered by its URL)");
        if (transport is null)
        {
            transport = new JsonObject();
            manifest["transport"] = transport;
        }
        transport["type"] = "stdio-jsonrpc";
        var stdio = transport["stdio"] as JsonObject ?? new JsonObject();
        var kept = new JsonObject
        {
            ["command"] = "dotnet",
            ["args"] = new JsonArray($"{assemblyName}.dll", "--host-stdio"),
            ["workingDirectory"] = ".",
        };
        // Anything else the author set (an environment, a timeout) stays as written.
        foreach (var (key, value) in stdio)
            if (key is not ("command" or "args" or "workingDirectory")) kept[key] = value?.DeepClone();
        transport["stdio"] = kept;
        return manifest;
    }

    /// <summary>Writes the ZIP: manifest.json first, then every published file in ordinal path order.</summary>
    public static PackResult Pack(PackRequest request)
    {
        if (string.IsNullOrWhiteSpace(request.AssemblyName) || request.AssemblyName.IndexOfAny(['/', '\\']) >= 0)
            throw new PackException(PackErrors.Usage, $"\"{request.AssemblyName}\" is not an assembly name");
        var publishDir = Path.GetFullPath(request.PublishDir);
        if (!Directory.Exists(publishDir)) throw new PackException(PackErrors.PublishMissing, $"{publishDir} does not exist; run dotnet publish first");
        var entry = Path.Combine(publishDir, request.AssemblyName + ".dll");
        if (!File.Exists(entry))
            throw new PackException(PackErrors.PublishMissing, $"{entry} is missing: the plugin project must be an executable (OutputType Exe)");
        foreach (var needed in new[] { ".deps.json", ".runtimeconfig.json" })
            if (!File.Exists(Path.Combine(publishDir, request.AssemblyName + needed)))
                throw new PackException(PackErrors.PublishMissing, $"{request.AssemblyName}{needed} is missing from {publishDir}; publish a framework-dependent executable");
        var manifest = RewriteManifest(request.ManifestPath, request.AssemblyName);
        var output = Path.GetFullPath(request.OutputPath);

        var skip = new HashSet<string>(StringComparer.Ordinal)
        {
            "manifest.json",
            // The apphost is not launched (the manifest runs `dotnet <Assembly>.dll`) and is built for one platform only.
            request.AssemblyName,
            request.AssemblyName + ".exe",
        };
        var files = Directory.EnumerateFiles(publishDir, "*", SearchOption.AllDirectories)
            .Where(f => !string.Equals(Path.GetFullPath(f), output, StringComparison.Ordinal))
            .Select(f => (Source: f, Path: Path.GetRelativePath(publishDir, f).Replace('\\', '/')))
            .Where(f => !skip.Contains(f.Path))
            .OrderBy(f => f.Path, StringComparer.Ordinal)
            .ToList();

        Directory.CreateDirectory(Path.GetDirectoryName(output)!);
        var temp = output + ".tmp";
        var entries = new List<string>();
        using (var stream = new FileStream(temp, FileMode.Create, FileAccess.Write))
        using (var zip = new ZipArchive(stream, ZipArchiveMode.Create))
        {
            var manifestBytes = JsonSerializer.SerializeToUtf8Bytes(manifest, new JsonSerializerOptions { WriteIndented = true, Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
            Add(zip, "manifest.json", manifestBytes, request.EntryTime);
            entries.Add("manifest.json");
            foreach (var (source, path) in files)
            {
                Add(zip, path, File.ReadAllBytes(source), request.EntryTime);
                entries.Add(path);
            }
        }
        File.Move(temp, output, overwrite: true);
        var bytes = File.ReadAllBytes(output);
        return new PackResult(output, manifest["pluginId"]!.GetValue<string>(), entries, bytes.Length, Convert.ToHexString(SHA256.HashData(bytes)).ToLowerInvariant());
    }

    private static void Add(ZipArchive zip, string path, byte[] data, DateTimeOffset time)
    {
        var entry = zip.CreateEntry(path, CompressionLevel.Optimal);
        entry.LastWriteTime = time;
        // A regular file, rw-r--r--, whatever the build machine's umask.
        entry.ExternalAttributes = unchecked((int)((0x8000u | 0x1A4u) << 16));
        using var s = entry.Open();
        s.Write(data);
    }
}
