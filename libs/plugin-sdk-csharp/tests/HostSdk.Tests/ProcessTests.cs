using System.Text.Json;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>The sample echo plugin as a real process (dotnet Echo.dll), driven by the test host over its stdin and stdout.</summary>
public class ProcessTests
{
    private const string PluginId = "com.example.csharp-echo";
    private static readonly string EchoDll = Path.Combine(AppContext.BaseDirectory, "Echo.dll");

    [Fact]
    public async Task WithoutTheFlagTheSamplePrintsHelpOnStderrAndExits2()
    {
        await using var host = TestHost.StartProcess(PluginId, "dotnet", EchoDll);
        Assert.Equal(2, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Contains("--host-stdio", host.Stderr);
    }

    [Fact]
    public async Task TheSampleRepliesInMarkdownKeepsConsoleOutputOffStdoutAndStops()
    {
        await using var host = TestHost.StartProcess(PluginId, "dotnet", EchoDll, Catalog.StdioFlag);
        host.Commands = [new Command { Name = "echo" }];
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        var ack = await host.SendMessageAsync("e1", "/echo *hi*");
        Assert.True(ack.Result!.Value.GetProperty("accepted").GetBoolean());
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        var message = reply.Params.GetProperty("message").Deserialize(WireJsonContext.Default.OutgoingMessage)!;
        Assert.Equal("markdown", message.Format);
        Assert.Equal("U-1", Assert.IsType<MessagePartMentionUser>(message.Parts[0]).Id);
        Assert.Equal("*hi*", Assert.IsType<MessagePartText>(message.Parts[2]).Text);
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        var stop = await host.RequestAsync(Catalog.MethodPluginStop, new System.Text.Json.Nodes.JsonObject { ["reason"] = "operator" });
        Assert.True(stop.Result!.Value.GetProperty("accepted").GetBoolean());
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(30)));
        // Console.WriteLine in OnStart went to stderr; had it reached stdout, the test host's frame reader would have broken.
        Assert.Contains("echo plugin started", host.Stderr);
        Assert.DoesNotContain("stdout broke", host.Stderr);
    }

    [Fact]
    public async Task TheSampleExitsWhenItsStdinEnds()
    {
        await using var host = TestHost.StartProcess(PluginId, "dotnet", EchoDll, Catalog.StdioFlag);
        Assert.False((await host.InitializeAsync()).IsError);
        host.CloseInput();
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(30)));
    }
}
