using System.IO.Compression;
using System.Security.Cryptography;
using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using HostSdk.Wire;

namespace HostSdk.Pack;

/// <summary>A refusal of the packer, with its packaging code of the catalogue (docs/protocol/v2.md section 11.5).</summary>
public sealed class PackException(string code, string message) : Exception(message)
{
    /// <summary>The catalogue code, e.g. PACK_MANIFEST_MISSING (the same code every language's packer reports).</summary>
    public string Code { get; } = PackErrors.Fixes.ContainsKey(code) ? code : throw new ArgumentException($"{code} is not a packaging code", nameof(code));

    /// <summary>The MSBuild code this refusal is reported with (HOSTSDKnnn).</summary>
    public string MSBuildCode => PackErrors.MSBuildCodes[Code];
}

/// <summary>
/// The packaging codes the packer and the buildTransitive targets report, from the generated catalogue. MSBuild
/// diagnostics carry MSBuild-style codes, so each catalogue code maps to one HOSTSDKnnn code and the message starts
/// with the catalogue code: <c>error HOSTSDK007: PACK_TRANSPORT_NOT_STDIO: ...</c>. The SDK's README lists the
/// mapping; a test checks it against this table and the targets, both ways.
/// </summary>
public static class PackErrors
{
    public const string Usage = Catalog.ErrPackUsage;
    public const string ManifestMissing = Catalog.ErrPackManifestMissing;
    public const string ManifestInvalid = Catalog.ErrPackManifestInvalid;
    public const string TransportNotStdio = Catalog.ErrPackTransportNotStdio;
    public const string EntryMissing = Catalog.ErrPackEntryMissing;
    public const string DependencyUnresolved = Catalog.ErrPackDependencyUnresolved;
    public const string OutputNotWritable = Catalog.ErrPackOutputNotWritable;

    /// <summary>Catalogue code to MSBuild code. HOSTSDK001 to 004 are raised by the targets before the packer runs.</summary>
    public static readonly IReadOnlyDictionary<string, string> MSBuildCodes = new Dictionary<string, string>
    {
        [Catalog.ErrPackManifestMissing] = "HOSTSDK001",
        [Catalog.ErrPackProjectNotExecutable] = "HOSTSDK002",
        [Catalog.ErrPackPublishSelfContained] = "HOSTSDK003",
        [Catalog.ErrPackToolMissing] = "HOSTSDK004",
        [Catalog.ErrPackUsage] = "HOSTSDK005",
        [Catalog.ErrPackManifestInvalid] = "HOSTSDK006",
        [Catalog.ErrPackTransportNotStdio] = "HOSTSDK007",
        [Catalog.ErrPackEntryMissing] = "HOSTSDK008",
        [Catalog.ErrPackDependencyUnresolved] = "HOSTSDK009",
        [Catalog.ErrPackOutputNotWritable] = "HOSTSDK010",
    };

    /// <summary>What to do about each code: the catalogue's message.</summary>
    public static readonly IReadOnlyDictionary<string, string> Fixes =
        MSBuildCodes.Keys.ToDictionary(code => code, code => Catalog.LookupError(code)?.Message ?? throw new InvalidOperationException($"{code} is not in the catalogue"));
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
            stderr.WriteLine($"{Path.GetFullPath(manifest)}: error {e.MSBuildCode}: {e.Code}: {e.Message} (fix: {PackErrors.Fixes[e.Code]})");
            return 1;
        }
    }

    private static int Usage(TextWriter stderr, string why)
    {
        stderr.WriteLine($"HostSdk.Pack: error {PackErrors.MSBuildCodes[PackErrors.Usage]}: {PackErrors.Usage}: {why}");
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
        if (type is not null && type != Catalog.StdioTransport)
            throw new PackException(PackErrors.TransportNotStdio, $"{manifestPath}: transport.type is \"{type}\"; only stdio plugins are uploaded as a ZIP (an HTTP plugin is registered by its URL)");
        if (transport is null && manifest.ContainsKey("capabilities"))
            throw new PackException(PackErrors.TransportNotStdio, $"{manifestPath} is an HTTP plugin manifest (capabilities and no transport); an HTTP plugin is registered by its URL");
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
        if (!Directory.Exists(publishDir)) throw new PackException(PackErrors.EntryMissing, $"{publishDir} does not exist; run dotnet publish first");
        var entry = Path.Combine(publishDir, request.AssemblyName + ".dll");
        if (!File.Exists(entry))
            throw new PackException(PackErrors.EntryMissing, $"{entry} is missing: the plugin project must be an executable (OutputType Exe)");
        foreach (var needed in new[] { ".deps.json", ".runtimeconfig.json" })
            if (!File.Exists(Path.Combine(publishDir, request.AssemblyName + needed)))
                throw new PackException(PackErrors.EntryMissing, $"{request.AssemblyName}{needed} is missing from {publishDir}; publish a framework-dependent executable");
        var manifest = RewriteManifest(request.ManifestPath, request.AssemblyName);
        CheckDependencies(publishDir, request.AssemblyName);
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

        var temp = output + ".tmp";
        var entries = new List<string>();
        FileStream stream;
        try
        {
            Directory.CreateDirectory(Path.GetDirectoryName(output)!);
            stream = new FileStream(temp, FileMode.Create, FileAccess.Write);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new PackException(PackErrors.OutputNotWritable, $"cannot write {output}: {e.Message}");
        }
        using (stream)
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
        try
        {
            File.Move(temp, output, overwrite: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            File.Delete(temp);
            throw new PackException(PackErrors.OutputNotWritable, $"cannot write {output}: {e.Message}");
        }
        var bytes = File.ReadAllBytes(output);
        return new PackResult(output, manifest["pluginId"]!.GetValue<string>(), entries, bytes.Length, Convert.ToHexString(SHA256.HashData(bytes)).ToLowerInvariant());
    }

    /// <summary>
    /// Every runtime assembly the .deps.json of the plugin names is in the publish folder (an app-local assembly
    /// sits at its root under its file name), so the package loads what the plugin was built against.
    /// </summary>
    private static void CheckDependencies(string publishDir, string assemblyName)
    {
        var depsPath = Path.Combine(publishDir, assemblyName + ".deps.json");
        JsonNode? deps;
        try
        {
            deps = JsonNode.Parse(File.ReadAllBytes(depsPath), documentOptions: new JsonDocumentOptions { MaxDepth = 64 });
        }
        catch (JsonException e)
        {
            throw new PackException(PackErrors.DependencyUnresolved, $"{depsPath} is not JSON ({e.Message}); publish again");
        }
        var missing = new SortedSet<string>(StringComparer.Ordinal);
        foreach (var (_, target) in deps?["targets"] as JsonObject ?? new JsonObject())
        {
            foreach (var (library, info) in target as JsonObject ?? new JsonObject())
            {
                foreach (var (asset, _) in info?["runtime"] as JsonObject ?? new JsonObject())
                {
                    var file = Path.GetFileName(asset);
                    if (!File.Exists(Path.Combine(publishDir, file))) missing.Add($"{file} ({library})");
                }
            }
        }
        if (missing.Count > 0)
            throw new PackException(PackErrors.DependencyUnresolved, $"the publish folder {publishDir} lacks {string.Join(", ", missing)}, which {assemblyName}.deps.json names; publish again (dotnet publish -c Release)");
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
