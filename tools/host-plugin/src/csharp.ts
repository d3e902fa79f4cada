import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RELEASE_VERSIONS } from '@host/protocol';
import { CliError } from './errors';
import { richStarterManifest, STARTER_IMAGE_URL } from './starter-rich';

/**
 * C# plugin projects: `init --lang csharp` writes one, and `pack` inside one
 * runs `dotnet publish -c Release`, whose MSBuild targets (shipped in the
 * HostSdk package under buildTransitive/) write artifacts/<AssemblyName>.zip;
 * so the Node CLI and the .NET command give the same ZIP. The project takes
 * HostSdk as a real package from its own local feed (packages/, a copy of the
 * .nupkg), and everything else from NuGet.
 */

/** The SDK version the C# templates name, from the one version source; HostSdk.csproj says the same (a test checks). */
export const CSHARP_SDK_VERSION: string = RELEASE_VERSIONS.sdkVersion;

/** The test packages of the scaffolded test project (the versions the SDK's own tests use). */
const TEST_PACKAGES = { 'Microsoft.NET.Test.Sdk': '18.0.1', xunit: '2.9.3', 'xunit.runner.visualstudio': '3.1.5' };

export interface CsharpInitOptions {
  pluginId: string;
  name: string;
  author: string;
  description: string;
}

/** The assembly name: the last segment of the plugin id in PascalCase ("com.example.csharp-echo" gives CsharpEcho). */
export function csharpAssemblyName(pluginId: string): string {
  const last = pluginId.slice(pluginId.lastIndexOf('.') + 1);
  const name = last
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  return /^[A-Za-z]/.test(name) ? name : `Plugin${name}`;
}

/** The files of a new C# plugin project, by path (the SDK package is added by copyCsharpSdk). */
export function csharpProjectFiles(o: CsharpInitOptions): Map<string, string> {
  const asm = csharpAssemblyName(o.pluginId);
  const files = new Map<string, string>();
  files.set(
    'manifest.json',
    richStarterManifest({ ...o, sdkVersion: CSHARP_SDK_VERSION, start: { command: 'dotnet', args: [`${asm}.dll`] } }),
  );
  files.set(
    `${asm}.csproj`,
    `<Project Sdk="Microsoft.NET.Sdk">
  <!-- dotnet publish -c Release writes artifacts/${asm}.zip (the HostSdk package's MSBuild targets). -->
  <PropertyGroup>
    <OutputType>Exe</OutputType>
    <TargetFramework>net8.0</TargetFramework>
    <!-- Runs on the newest .NET installed when .NET 8 itself is not. -->
    <RollForward>Major</RollForward>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <InvariantGlobalization>true</InvariantGlobalization>
    <AssemblyName>${asm}</AssemblyName>
    <RootNamespace>${asm}</RootNamespace>
    <!-- The tests, the packages and the ZIPs live in this folder but are not part of the plugin. -->
    <DefaultItemExcludes>$(DefaultItemExcludes);tests/**;artifacts/**;packages/**</DefaultItemExcludes>
    <!-- Set to false to publish without writing the ZIP; HostPluginPackagePath and HostPluginManifest change where. -->
    <HostPackagePluginOnPublish>true</HostPackagePluginOnPublish>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="HostSdk" Version="${CSHARP_SDK_VERSION}" />
  </ItemGroup>
</Project>
`,
  );
  files.set(
    'EchoPlugin.cs',
    `using HostSdk;
using HostSdk.Wire;

namespace ${asm};

/// <summary>${o.name}: a protocol v2 chat-bot plugin.</summary>
public static class EchoPlugin
{
    public const string PluginId = "${o.pluginId}";

    /// <summary>The picture /cat sends: replace it with your own, an http or https URL the platform can fetch (PNG or JPEG).</summary>
    public const string CatUrl = "${STARTER_IMAGE_URL}";

    public static Plugin Create() =>
        new PluginBuilder(PluginId)
            .Description(${JSON.stringify(o.description)})
            .Command("echo", async ctx =>
            {
                // "/echo hello" -> a Markdown reply that mentions the sender (groups only; one-to-one chats get
                // plain text). Text.Literal shows the user's text as written: Markdown in it is escaped, not posted.
                var text = ctx.Args.Length > 0 ? ctx.Args : "nothing";
                if (ctx.Event.Conversation.Type == "group")
                    await ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender), Text.Of(" said: **"), Text.Literal(text), Text.Of("**"));
                else
                    await ctx.ReplyAsync(Text.Of("You said: "), Text.Of(text));
            })
            // "/cat" -> an image with a caption (QQ groups and one-to-one chats).
            .Command("cat", ctx => ctx.ReplyAsync(Text.Of("Here is a cat"), Parts.ImageFromUrl(CatUrl, "a cat")))
            .Command("vote", async ctx =>
            {
                // "/vote" -> a question with two buttons under it (Markdown: groups only). A click comes back to
                // OnInteraction below with the button's data.
                if (ctx.Event.Conversation.Type != "group")
                {
                    await ctx.ReplyAsync(Text.Of("Votes work in groups."));
                    return;
                }
                var buttons = Keyboard.Of([Buttons.Callback("Yes", "vote:yes", primary: true), Buttons.Callback("No", "vote:no")]);
                await ctx.ReplyMarkdownAsync([Text.Of("**Do you like cats?**")], buttons);
            })
            // A click on a callback button (manifest.json subscribes to "interaction.created").
            .OnInteraction(async ctx =>
            {
                if (ctx.Data.StartsWith("vote:", StringComparison.Ordinal))
                    await ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender!), Text.Of(" voted **"), Text.Literal(ctx.Data["vote:".Length..]), Text.Of("**"));
            })
            .Build();
}
`,
  );
  files.set(
    'Program.cs',
    `// Without --host-stdio the plugin prints help and exits; the host starts it with the flag.
return await ${asm}.EchoPlugin.Create().RunAsync(args);
`,
  );
  files.set(
    `tests/${asm}.Tests/${asm}.Tests.csproj`,
    `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <RollForward>Major</RollForward>
    <Nullable>enable</Nullable>
    <ImplicitUsings>enable</ImplicitUsings>
    <IsPackable>false</IsPackable>
    <IsTestProject>true</IsTestProject>
  </PropertyGroup>
  <ItemGroup>
${Object.entries(TEST_PACKAGES)
  .map(([id, v]) => `    <PackageReference Include="${id}" Version="${v}" />`)
  .join('\n')}
  </ItemGroup>
  <ItemGroup>
    <ProjectReference Include="../../${asm}.csproj" />
  </ItemGroup>
  <ItemGroup>
    <Using Include="Xunit" />
  </ItemGroup>
</Project>
`,
  );
  files.set(
    `tests/${asm}.Tests/EchoPluginTests.cs`,
    `using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Testing;
using HostSdk.Wire;

namespace ${asm}.Tests;

public class EchoPluginTests
{
    private static async Task<TestHost> Started()
    {
        var host = TestHost.Start(EchoPlugin.Create());
        host.Commands = [new Command { Name = "echo", Prefixes = ["/"] }, new Command { Name = "cat", Prefixes = ["/"] }, new Command { Name = "vote", Prefixes = ["/"] }];
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        return host;
    }

    [Fact]
    public async Task EchoRepliesInMarkdownMentioningTheSender()
    {
        await using var host = await Started();
        var ack = await host.SendMessageAsync("e1", "/echo *hi*");
        Assert.True(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        var message = reply.Params.GetProperty("message").Deserialize(WireJsonContext.Default.OutgoingMessage)!;
        Assert.Equal("markdown", message.Format);
        // The mention of the sender (the test host's default sender), then the text with the user's Markdown escaped.
        Assert.IsType<MessagePartMentionUser>(message.Parts[0]);
        Assert.Equal(" said: **", Assert.IsType<MessagePartText>(message.Parts[1]).Text);
        Assert.Equal("*hi*", Assert.IsType<MessagePartText>(message.Parts[2]).Text);
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
    }

    [Fact]
    public async Task UserMarkdownIsShownAsWritten()
    {
        await using var host = await Started();
        await host.SendMessageAsync("e2", "/echo [x](http://e.example)");
        var message = await NextReply(host);
        // A literal part: the host escapes its Markdown, so the link is shown as text, not posted as a link.
        var text = Assert.IsType<MessagePartText>(message.Parts[2]);
        Assert.Equal("[x](http://e.example)", text.Text);
        Assert.True(text.Literal);
    }

    [Fact]
    public async Task OneToOneChatsGetText()
    {
        await using var host = await Started();
        var ev = TestHost.MessageEvent("e3", "/echo hi", "echo", "hi");
        ev["conversation"] = new JsonObject { ["type"] = "c2c", ["conversationId"] = "c2c:U-1" };
        ev["messageReference"] = new JsonObject { ["messageId"] = "msg-e3", ["targetType"] = "user", ["targetId"] = "U-1" };
        await host.RequestAsync(Catalog.MethodEventsMessage, ev);
        var message = await NextReply(host);
        Assert.Equal("text", message.Format);
        Assert.Equal("You said: hi", string.Concat(message.Parts.Select(p => Assert.IsType<MessagePartText>(p).Text)));
    }

    [Fact]
    public async Task MessagesThatAreNotCommandsAreIgnored()
    {
        await using var host = await Started();
        var ack = await host.SendMessageAsync("e4", "just chatting");
        Assert.False(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        // The first reply the plugin sends answers the later command: the chat line got none.
        await host.SendMessageAsync("e5", "/echo after");
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        Assert.Equal("e5", reply.Params.GetProperty("eventId").GetString());
    }

    [Fact]
    public async Task CatRepliesWithAnImage()
    {
        await using var host = await Started();
        await host.SendMessageAsync("e6", "/cat");
        var message = await NextReply(host);
        Assert.Equal(EchoPlugin.CatUrl, Assert.IsType<MessagePartImage>(message.Parts[1]).Url);
    }

    [Fact]
    public async Task AVoteButtonClickIsAnswered()
    {
        await using var host = await Started();
        await host.SendMessageAsync("e7", "/vote");
        var question = await NextReply(host);
        var yes = question.Keyboard!.Rows[0].Buttons[0];
        // The test host clicks the button as the host delivers a click: events.deliver with interaction.created.
        var ack = await host.ClickAsync("e8", yes.Data, yes.Id);
        Assert.True(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        var answer = await host.WaitForCallAsync(Catalog.MethodMessagesReply, c => c.Params.GetProperty("eventId").GetString() == "e8");
        var parts = answer.Params.GetProperty("message").Deserialize(WireJsonContext.Default.OutgoingMessage)!.Parts;
        Assert.IsType<MessagePartMentionUser>(parts[0]);
        Assert.Equal("yes", Assert.IsType<MessagePartText>(parts[2]).Text);
    }

    private static async Task<OutgoingMessage> NextReply(TestHost host)
    {
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        return reply.Params.GetProperty("message").Deserialize(WireJsonContext.Default.OutgoingMessage)!;
    }
}
`,
  );
  files.set(
    'nuget.config',
    `<?xml version="1.0" encoding="utf-8"?>
<configuration>
  <!-- HostSdk comes from packages/ (the .nupkg host-plugin init put there); everything else from NuGet. -->
  <packageSources>
    <clear />
    <add key="hostsdk-local" value="packages" />
    <add key="nuget.org" value="https://api.nuget.org/v3/index.json" />
  </packageSources>
  <packageSourceMapping>
    <packageSource key="hostsdk-local">
      <package pattern="HostSdk" />
      <package pattern="HostSdk.*" />
    </packageSource>
    <packageSource key="nuget.org">
      <package pattern="*" />
    </packageSource>
  </packageSourceMapping>
</configuration>
`,
  );
  files.set('.gitignore', 'bin/\nobj/\nartifacts/\n');
  files.set(
    'README.md',
    `# ${o.name}

A protocol v2 plugin (\`${o.pluginId}\`) written with the C# SDK \`HostSdk\` (.NET 8 or newer). The SDK is a
NuGet package; \`packages/\` holds it as a local feed (\`nuget.config\`), everything else restores from NuGet.

\`\`\`sh
dotnet test tests/${asm}.Tests        # tests with the SDK's TestHost
dotnet publish -c Release            # writes artifacts/${asm}.zip (or: host-plugin pack)
dotnet run                           # without --host-stdio it only prints help
\`\`\`

Upload \`artifacts/${asm}.zip\` to the host (\`POST /api/plugins/packages\`), start it, and send \`/echo hello\`,
\`/cat\` (an image) or \`/vote\` (buttons; a click comes back to \`OnInteraction\`) in a group. The packaged manifest launches \`dotnet ${asm}.dll --host-stdio\`, so the host's machine needs the
.NET runtime (8 or newer). Check the package with \`host-plugin doctor artifacts/${asm}.zip\`.

To serve the same plugin over HTTP (registered by URL instead of uploaded), reference the package
\`HostSdk.AspNetCore\` (also in \`packages/\`) from a web project and map it: \`app.MapHostPlugin(EchoPlugin.Create(),
new HttpPluginOptions { Secrets = HostSecrets.FromFile("signing-secret.txt") })\`.

The ZIP is written by the HostSdk package's MSBuild targets after \`dotnet publish\`; the project properties
\`HostPackagePluginOnPublish\` (true/false), \`HostPluginManifest\` (the manifest to pack, default
\`manifest.json\`) and \`HostPluginPackagePath\` (the ZIP, default \`artifacts/${asm}.zip\`) change that.
`,
  );
  return files;
}

/**
 * The HostSdk packages to put into new projects: libs/plugin-sdk-csharp/artifacts/feed (built by dotnet pack)
 * beside this CLI in a checkout of the host repository, or the copy the build puts into dist/sdk/csharp/packages,
 * which the published package carries (scripts/bundle-sdks.ts).
 */
export function csharpSdkFeed(cliDir: string = __dirname): string {
  const candidates = [
    resolve(cliDir, '..', '..', '..', 'libs', 'plugin-sdk-csharp', 'artifacts', 'feed'),
    resolve(cliDir, 'sdk', 'csharp', 'packages'),
  ];
  const found = candidates.find((dir) => existsSync(join(dir, `HostSdk.${CSHARP_SDK_VERSION}.nupkg`)));
  if (!found) throw new CliError('CSHARP_SDK_MISSING', `no HostSdk.${CSHARP_SDK_VERSION}.nupkg in ${candidates.join(', ')}`);
  return found;
}

/** Copies the HostSdk packages of this version into the project's packages/ feed. */
export function copyCsharpSdk(target: string, feed: string = csharpSdkFeed()): string[] {
  const packages = readdirSync(feed).filter((f) => /^HostSdk(\.[A-Za-z]+)*\.\d/.test(f) && f.endsWith(`.${CSHARP_SDK_VERSION}.nupkg`));
  mkdirSync(join(target, 'packages'), { recursive: true });
  for (const p of packages) copyFileSync(join(feed, p), join(target, 'packages', p));
  return packages.map((p) => `packages/${p}`);
}

/** True when the folder is a C# plugin project: manifest.json beside exactly one .csproj. */
export function isCsharpProject(dir: string): boolean {
  return existsSync(join(dir, 'manifest.json')) && existsSync(dir) && readdirSync(dir).filter((f) => f.endsWith('.csproj')).length === 1;
}

/**
 * Runs `dotnet publish -c Release` in `dir` (its targets write the ZIP) and returns the exit code; the output
 * goes straight to the terminal. With outDir the ZIP goes there (HostPluginPackagePath).
 */
export function packCsharp(dir: string, options: { outDir?: string } = {}): number {
  const dotnet = process.env['HOST_PLUGIN_DOTNET'] || 'dotnet';
  const csproj = readdirSync(dir).find((f) => f.endsWith('.csproj'))!;
  const args = ['publish', csproj, '-c', 'Release', '--nologo', '-p:HostPackagePluginOnPublish=true'];
  if (options.outDir) {
    const asm = /<AssemblyName>([^<]+)<\/AssemblyName>/.exec(readFileSafe(join(dir, csproj)))?.[1] ?? csproj.replace(/\.csproj$/, '');
    args.push(`-p:HostPluginPackagePath=${resolve(dir, options.outDir, `${asm}.zip`)}`);
  }
  const result = spawnSync(dotnet, args, {
    cwd: dir,
    stdio: 'inherit',
    env: { DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', DOTNET_SKIP_FIRST_TIME_EXPERIENCE: '1', ...process.env },
  });
  if (result.error) throw new CliError('DOTNET_NOT_FOUND', `${dotnet} could not be started: ${result.error.message}`);
  return result.status ?? 1;
}

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
