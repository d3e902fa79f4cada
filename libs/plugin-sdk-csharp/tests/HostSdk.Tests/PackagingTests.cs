extern alias PackTool;

using System.Diagnostics;
using System.IO.Compression;
using System.Security.Cryptography;
using System.Text.Json.Nodes;
using PackTool::HostSdk.Pack;

namespace HostSdk.Tests;

/// <summary>The packer behind the SDK package's buildTransitive targets, on publish folders made here.</summary>
public sealed class PackerTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("hostsdk-pack-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private const string Manifest = """
        {
          "pluginId": "com.example.packed",
          "name": "Packed <demo>",
          "version": "1.2.3",
          "protocolVersion": 2,
          "transport": { "type": "stdio-jsonrpc", "stdio": { "command": "dotnet", "args": ["bin/Debug/x.dll"], "env": { "A": "1" } } }
        }
        """;

    private string Publish(string manifest = Manifest)
    {
        var publish = Path.Combine(_dir, "publish");
        Directory.CreateDirectory(Path.Combine(publish, "runtimes", "linux"));
        File.WriteAllBytes(Path.Combine(publish, "Demo.dll"), [1, 2, 3]);
        File.WriteAllText(Path.Combine(publish, "Demo.deps.json"), "{}");
        File.WriteAllText(Path.Combine(publish, "Demo.runtimeconfig.json"), "{}");
        File.WriteAllText(Path.Combine(publish, "Demo"), "apphost");
        File.WriteAllText(Path.Combine(publish, "manifest.json"), "{\"stale\": true}");
        File.WriteAllText(Path.Combine(publish, "runtimes", "linux", "native.so"), "native");
        File.WriteAllText(Path.Combine(_dir, "manifest.json"), manifest);
        return publish;
    }

    private PackRequest Request(string publish, string zip = "out/Demo.zip") =>
        new(publish, Path.Combine(_dir, "manifest.json"), "Demo", Path.Combine(_dir, zip));

    [Fact]
    public void PacksThePublishFolderWithTheManifestRewrittenToLaunchTheAssemblyWithDotnet()
    {
        var result = PluginPacker.Pack(Request(Publish()));
        Assert.Equal("com.example.packed", result.PluginId);
        Assert.Equal(["manifest.json", "Demo.deps.json", "Demo.dll", "Demo.runtimeconfig.json", "runtimes/linux/native.so"], result.Entries);
        using var zip = ZipFile.OpenRead(result.OutputPath);
        Assert.Equal(result.Entries, zip.Entries.Select(e => e.FullName));
        Assert.All(zip.Entries, e => Assert.Equal(PluginPacker.DefaultEntryTime.DateTime, e.LastWriteTime.DateTime));
        using var reader = new StreamReader(zip.GetEntry("manifest.json")!.Open());
        var text = reader.ReadToEnd();
        Assert.Contains("Packed <demo>", text);
        var stdio = JsonNode.Parse(text)!["transport"]!["stdio"]!;
        Assert.Equal("dotnet", (string?)stdio["command"]);
        Assert.Equal(["Demo.dll", "--host-stdio"], stdio["args"]!.AsArray().Select(a => (string?)a));
        Assert.Equal(".", (string?)stdio["workingDirectory"]);
        Assert.Equal("1", (string?)stdio["env"]!["A"]);
        Assert.Equal(Convert.ToHexString(SHA256.HashData(File.ReadAllBytes(result.OutputPath))).ToLowerInvariant(), result.Sha256);
    }

    [Fact]
    public void TheSameInputsGiveTheSameBytes()
    {
        var publish = Publish();
        var first = PluginPacker.Pack(Request(publish, "a.zip"));
        File.SetLastWriteTimeUtc(Path.Combine(publish, "Demo.dll"), DateTime.UtcNow.AddDays(-3));
        var second = PluginPacker.Pack(Request(publish, "b.zip"));
        Assert.Equal(first.Sha256, second.Sha256);
        var later = PluginPacker.Pack(Request(publish, "c.zip") with { EntryTime = new DateTimeOffset(2026, 1, 1, 0, 0, 0, TimeSpan.Zero) });
        Assert.NotEqual(first.Sha256, later.Sha256);
    }

    [Fact]
    public void AZipWrittenInsideThePublishFolderIsNotPackedIntoItself()
    {
        var publish = Publish();
        PluginPacker.Pack(Request(publish, "publish/Demo.zip"));
        var again = PluginPacker.Pack(Request(publish, "publish/Demo.zip"));
        Assert.DoesNotContain("Demo.zip", again.Entries);
    }

    [Theory]
    [InlineData("{\"pluginId\":\"com.example.http\",\"transport\":{\"type\":\"http\"}}", "PACK_TRANSPORT_NOT_STDIO")]
    [InlineData("{\"pluginId\":\"com.example.http\",\"capabilities\":1}", "PACK_TRANSPORT_NOT_STDIO")]
    [InlineData("{\"pluginId\":\"Com.Example\"}", "PACK_MANIFEST_INVALID")]
    [InlineData("{\"name\":\"no id\"}", "PACK_MANIFEST_INVALID")]
    [InlineData("[1, 2]", "PACK_MANIFEST_INVALID")]
    [InlineData("{\"pluginId\": ", "PACK_MANIFEST_INVALID")]
    public void RefusesManifestsItCannotPack(string manifest, string code)
    {
        var e = Assert.Throws<PackException>(() => PluginPacker.Pack(Request(Publish(manifest))));
        Assert.Equal(code, e.Code);
        Assert.False(File.Exists(Path.Combine(_dir, "out/Demo.zip")));
    }

    [Fact]
    public void RefusesAMissingManifestAnOversizedOneAndAnIncompletePublishFolder()
    {
        var publish = Publish();
        File.Delete(Path.Combine(_dir, "manifest.json"));
        Assert.Equal("PACK_MANIFEST_MISSING", Assert.Throws<PackException>(() => PluginPacker.Pack(Request(publish))).Code);
        File.WriteAllText(Path.Combine(_dir, "manifest.json"), "{\"pluginId\":\"com.example.big\",\"pad\":\"" + new string('x', PluginPacker.MaxManifestBytes) + "\"}");
        Assert.Equal("PACK_MANIFEST_INVALID", Assert.Throws<PackException>(() => PluginPacker.Pack(Request(publish))).Code);
        File.Delete(Path.Combine(publish, "Demo.runtimeconfig.json"));
        Assert.Equal("PACK_ENTRY_MISSING", Assert.Throws<PackException>(() => PluginPacker.Pack(Request(publish))).Code);
        Assert.Equal("PACK_ENTRY_MISSING", Assert.Throws<PackException>(() => PluginPacker.Pack(Request(Path.Combine(_dir, "nowhere")))).Code);
    }

    [Fact]
    public void TheCommandLineReportsRefusalsInMSBuildsErrorFormat()
    {
        var publish = Publish("{\"pluginId\":\"com.example.http\",\"transport\":{\"type\":\"http\"}}");
        var (stdout, stderr) = (new StringWriter(), new StringWriter());
        var args = new[] { "--publish-dir", publish, "--manifest", Path.Combine(_dir, "manifest.json"), "--assembly", "Demo", "--out", Path.Combine(_dir, "x.zip") };
        Assert.Equal(1, PluginPacker.Run(args, stdout, stderr));
        Assert.Matches(@"manifest\.json: error HOSTSDK007: PACK_TRANSPORT_NOT_STDIO: .*\(fix: manifest\.json describes an HTTP plugin", stderr.ToString());
        Assert.Equal(2, PluginPacker.Run(["--publish-dir"], stdout, stderr));
        Assert.Equal(2, PluginPacker.Run(["--bogus", "x"], stdout, stderr));
        Assert.Contains("usage:", stderr.ToString());
        Assert.Contains("error HOSTSDK005: PACK_USAGE: ", stderr.ToString());
    }

    [Fact]
    public void RefusesAPublishFolderThatLacksAnAssemblyItsDepsJsonNames()
    {
        var publish = Publish();
        File.WriteAllText(Path.Combine(publish, "Demo.deps.json"), """
            {"targets": {".NETCoreApp,Version=v8.0": {
              "Demo/1.0.0": {"runtime": {"Demo.dll": {}}},
              "Greeting/2.0.0": {"runtime": {"lib/net8.0/Greeting.dll": {"assemblyVersion": "2.0.0.0"}}}
            }}}
            """);
        var e = Assert.Throws<PackException>(() => PluginPacker.Pack(Request(publish)));
        Assert.Equal("PACK_DEPENDENCY_UNRESOLVED", e.Code);
        Assert.Contains("Greeting.dll (Greeting/2.0.0)", e.Message);
        File.WriteAllBytes(Path.Combine(publish, "Greeting.dll"), [4]);
        Assert.Contains("Greeting.dll", PluginPacker.Pack(Request(publish)).Entries);
    }

    [Fact]
    public void RefusesAnOutputPathThatCannotBeWritten()
    {
        var publish = Publish();
        File.WriteAllText(Path.Combine(_dir, "a-file"), "not a folder");
        Assert.Equal("PACK_OUTPUT_NOT_WRITABLE", Assert.Throws<PackException>(() => PluginPacker.Pack(Request(publish, "a-file/out/Demo.zip"))).Code);
    }

    [Fact]
    public void EveryCodeIsAPackagingCodeOfTheCatalogueWithItsOwnMSBuildCode()
    {
        Assert.All(PackErrors.MSBuildCodes.Keys, c => Assert.Equal("PACK", HostSdk.Wire.Catalog.LookupError(c)?.Family));
        Assert.Equal(PackErrors.MSBuildCodes.Count, PackErrors.MSBuildCodes.Values.Distinct().Count());
        Assert.Throws<ArgumentException>(() => new PackException("pack.usage", "an old code"));
    }
}

/// <summary>
/// `dotnet publish` of a plugin project that takes HostSdk from the local feed, as a user's project does: the
/// buildTransitive targets write the ZIP, and the three properties change what they do.
/// </summary>
public sealed class PublishTargetsTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("hostsdk-publish-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    private static string SdkDir([System.Runtime.CompilerServices.CallerFilePath] string file = "") =>
        Path.GetFullPath(Path.Combine(Path.GetDirectoryName(file)!, "..", ".."));

    private static (int Code, string Output) Dotnet(string cwd, params string[] args)
    {
        var start = new ProcessStartInfo("dotnet") { WorkingDirectory = cwd, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (var a in args) start.ArgumentList.Add(a);
        start.Environment["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1";
        start.Environment["DOTNET_NOLOGO"] = "1";
        using var p = Process.Start(start)!;
        var stderr = p.StandardError.ReadToEndAsync();
        var stdout = p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        return (p.ExitCode, stdout + stderr.Result);
    }

    [Fact]
    public void PublishInReleaseWritesTheZipAndThePropertiesControlIt()
    {
        var feed = Path.Combine(SdkDir(), "artifacts", "feed");
        Assert.True(File.Exists(Path.Combine(feed, $"HostSdk.{Plugin.SdkVersion}.nupkg")), $"run `node scripts/dotnet.mjs feed` first ({feed})");
        File.WriteAllText(Path.Combine(_dir, "nuget.config"), $"""
            <configuration>
              <packageSources>
                <add key="hostsdk-local" value="{feed}" />
              </packageSources>
            </configuration>
            """);
        File.WriteAllText(Path.Combine(_dir, "Tiny.csproj"), $"""
            <Project Sdk="Microsoft.NET.Sdk">
              <PropertyGroup>
                <OutputType>Exe</OutputType>
                <TargetFramework>net8.0</TargetFramework>
                <RollForward>Major</RollForward>
                <AssemblyName>Tiny</AssemblyName>
              </PropertyGroup>
              <ItemGroup>
                <PackageReference Include="HostSdk" Version="{Plugin.SdkVersion}" />
              </ItemGroup>
            </Project>
            """);
        File.WriteAllText(Path.Combine(_dir, "Program.cs"), """
            var plugin = new HostSdk.PluginBuilder("com.example.tiny").Build();
            return await plugin.RunAsync(args);
            """);
        File.WriteAllText(Path.Combine(_dir, "manifest.json"), """{"pluginId":"com.example.tiny","transport":{"type":"stdio-jsonrpc","stdio":{"command":"x"}}}""");

        var (code, output) = Dotnet(_dir, "publish", "-c", "Release");
        Assert.True(code == 0, output);
        var zip = Path.Combine(_dir, "artifacts", "Tiny.zip");
        using (var archive = ZipFile.OpenRead(zip))
        {
            var names = archive.Entries.Select(e => e.FullName).ToList();
            Assert.Equal("manifest.json", names[0]);
            foreach (var file in new[] { "Tiny.dll", "Tiny.deps.json", "Tiny.runtimeconfig.json", "HostSdk.dll", "Microsoft.Extensions.Logging.Abstractions.dll" })
                Assert.Contains(file, names);
            Assert.DoesNotContain("Tiny", names);
        }
        var first = File.ReadAllBytes(zip);

        // No restore again: the second and third runs reuse the first one's.
        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore", "-p:HostPluginPackagePath=out/other.zip");
        Assert.True(code == 0, output);
        Assert.Equal(first, File.ReadAllBytes(Path.Combine(_dir, "out", "other.zip")));

        File.Delete(zip);
        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore", "-p:HostPackagePluginOnPublish=false");
        Assert.True(code == 0, output);
        Assert.False(File.Exists(zip));

        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore", "-p:HostPluginManifest=missing.json", "-p:HostPackagePluginOnPublish=true");
        Assert.NotEqual(0, code);
        Assert.Contains("error HOSTSDK001: PACK_MANIFEST_MISSING: ", output);

        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore", "-p:HostSdkPackerPath=missing/HostSdk.Pack.dll");
        Assert.NotEqual(0, code);
        Assert.Contains("error HOSTSDK004: PACK_TOOL_MISSING: ", output);

        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore", "-p:OutputType=Library", "-p:HostPackagePluginOnPublish=true");
        Assert.NotEqual(0, code);
        Assert.Contains("error HOSTSDK002: PACK_PROJECT_NOT_EXECUTABLE: ", output);

        File.WriteAllText(Path.Combine(_dir, "manifest.json"), """{"pluginId":"com.example.tiny","transport":{"type":"http"}}""");
        (code, output) = Dotnet(_dir, "publish", "-c", "Release", "--no-restore");
        Assert.NotEqual(0, code);
        Assert.Contains("error HOSTSDK007: PACK_TRANSPORT_NOT_STDIO: ", output);
    }
}

/// <summary>The frame writer: frames queued while a write is under way go out together, each one intact and in order.</summary>
public class FrameWriterTests
{
    private sealed class SlowStream : MemoryStream
    {
        public int Writes;
        public readonly ManualResetEventSlim FirstWriteStarted = new();
        public readonly ManualResetEventSlim Release = new();

        public override void Write(ReadOnlySpan<byte> buffer)
        {
            if (Interlocked.Increment(ref Writes) == 1)
            {
                FirstWriteStarted.Set();
                Release.Wait(TimeSpan.FromSeconds(10));
            }
            base.Write(buffer);
        }
    }

    [Fact]
    public async Task FramesWrittenDuringAWriteAreCoalescedIntoOneAndReadBackInOrder()
    {
        var stream = new SlowStream();
        var writer = new FrameWriter(stream);
        var first = Task.Run(() => writer.WriteAsync(w => { w.WriteNumber("id", 0); w.WriteBoolean("result", true); }));
        Assert.True(stream.FirstWriteStarted.Wait(TimeSpan.FromSeconds(10)));
        var rest = Enumerable.Range(1, 50).Select(i => writer.WriteAsync(w => { w.WriteNumber("id", i); w.WriteBoolean("result", true); })).ToList();
        Assert.All(rest, t => Assert.False(t.IsCompleted));
        stream.Release.Set();
        await Task.WhenAll(rest.Append(first)).WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(2, stream.Writes);
        var reader = new FrameReader(new MemoryStream(stream.ToArray()));
        for (var i = 0; i <= 50; i++) Assert.Equal(i, (await reader.NextAsync())!.Id!.Value.GetInt32());
        Assert.Null(await reader.NextAsync());
    }
}

/// <summary>The README's table of packaging codes and the codes the packer and the targets raise, both ways.</summary>
public class PackagingCodesTests
{
    private static string SdkDir([System.Runtime.CompilerServices.CallerFilePath] string file = "") =>
        Path.GetFullPath(Path.Combine(Path.GetDirectoryName(file)!, "..", ".."));

    [Fact]
    public void TheReadmeListsExactlyTheMappingOfThePackerAndTheTargets()
    {
        var readme = File.ReadAllText(Path.Combine(SdkDir(), "README.md"));
        var targets = File.ReadAllText(Path.Combine(SdkDir(), "src", "HostSdk", "buildTransitive", "HostSdk.targets"));
        var listed = System.Text.RegularExpressions.Regex.Matches(readme, @"^\| `(HOSTSDK\d+)` \| `(PACK_[A-Z_]+)` \|", System.Text.RegularExpressions.RegexOptions.Multiline)
            .Select(m => $"{m.Groups[1].Value} {m.Groups[2].Value}").Order(StringComparer.Ordinal).ToList();
        Assert.Equal(PackErrors.MSBuildCodes.Select(p => $"{p.Value} {p.Key}").Order(StringComparer.Ordinal), listed);
        // Each error of the targets carries the MSBuild code of the catalogue code its text starts with.
        var raised = System.Text.RegularExpressions.Regex.Matches(targets, "Code=\"(HOSTSDK\\d+)\"\\s+Text=\"(PACK_[A-Z_]+): ")
            .Select(m => (m.Groups[1].Value, m.Groups[2].Value)).ToList();
        Assert.Equal(4, raised.Count);
        Assert.All(raised, r => Assert.Equal(r.Item1, PackErrors.MSBuildCodes[r.Item2]));
    }
}
