using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Http;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>Interception (docs/protocol/v2.md 4.2, 5.3, 6.4): the decision as the stdio ACK and in the HTTP response.</summary>
public sealed class InterceptionTests : IDisposable
{
    private const string Id = HttpEndpointTests.PluginId;
    private readonly string _dir = Directory.CreateTempSubdirectory("hostsdk-intercept-").FullName;
    private readonly TaskCompletionSource _entered = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly TaskCompletionSource _release = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    /// <summary>A plugin whose "echo" runs <paramref name="decide"/>, then waits for the test, then replies.</summary>
    private Plugin Guard(Action<MessageContext> decide, bool intercepts = true, string permissions = "[\"messages.reply\", \"messages.intercept\"]") =>
        new PluginBuilder(Id)
            .Intercepts(intercepts)
            .Manifest(HttpEndpointTests.WriteManifest(_dir, permissions))
            .Command("echo", async ctx =>
            {
                decide(ctx);
                _entered.TrySetResult();
                await _release.Task;
                await ctx.ReplyAsync(Text.Of("checked"));
            })
            .Command("fail", ctx =>
            {
                _entered.TrySetResult();
                throw new HandlerException("guard.broken", "failed before deciding");
            })
            .Build();

    private static async Task<TestHost> Started(Plugin plugin)
    {
        var host = TestHost.Start(plugin);
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        return host;
    }

    private static Task<RpcResponse> Send(TestHost host, string eventId, string command = "echo") =>
        host.RequestAsync(Catalog.MethodEventsMessage, TestHost.MessageEvent(eventId, $"/{command} x", command, "x"));

    private static EventAck Ack(RpcResponse r)
    {
        Assert.False(r.IsError, r.ErrorMessage);
        return r.Result!.Value.Deserialize(WireJsonContext.Default.EventAck)!;
    }

    private static string? CompletedError(RecordedCall c) =>
        c.Params.TryGetProperty("error", out var e) && e.ValueKind == JsonValueKind.Object ? e.GetProperty("code").GetString() : null;

    /// <summary>Answered once every frame the plugin wrote before it is read: what was not sent by then, was not sent.</summary>
    private static async Task RoundTrip(TestHost host) => Assert.False((await host.RequestAsync(Catalog.MethodPluginPing, new JsonObject())).IsError);

    [Fact]
    public async Task AnInterceptorAcksWhenItsHandlerInterceptsBeforeTheHandlerEnds()
    {
        await using var host = await Started(Guard(ctx => ctx.Intercept()));
        var ack = Ack(await Send(host, "e1"));
        Assert.True(ack.Accepted);
        Assert.True(ack.Intercepted);
        await _entered.Task;
        Assert.DoesNotContain(host.Calls, c => c.Method == Catalog.MethodEventsCompleted); // the handler still runs
        _release.SetResult();
        await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        Assert.Null(CompletedError(await host.WaitForCallAsync(Catalog.MethodEventsCompleted)));
    }

    [Fact]
    public async Task AnInterceptorThatHasNotDecidedHoldsItsAckAndPassesWhenTheHandlerEnds()
    {
        await using var host = await Started(Guard(_ => { }));
        var pending = Send(host, "e1");
        await _entered.Task;
        await RoundTrip(host);
        Assert.False(pending.IsCompleted); // the host waits for this decision
        _release.SetResult();
        var ack = Ack(await pending);
        Assert.True(ack.Accepted);
        Assert.False(ack.InterceptedOrDefault);
        // The reply went out before the decision: an interceptor may reply before it decides.
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
    }

    [Fact]
    public async Task PassSendsTheDecisionAtOnce()
    {
        await using var host = await Started(Guard(ctx => ctx.Pass()));
        var ack = Ack(await Send(host, "e1"));
        Assert.True(ack.Accepted);
        Assert.False(ack.InterceptedOrDefault);
        _release.SetResult();
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
    }

    [Fact]
    public async Task DecidingTwiceDifferentlyIsADecisionConflict()
    {
        await using var host = await Started(Guard(ctx =>
        {
            ctx.Pass();
            ctx.Pass(); // the same decision again is fine
            ctx.Intercept();
        }));
        var ack = Ack(await Send(host, "e1"));
        Assert.False(ack.InterceptedOrDefault);
        Assert.Equal(Catalog.ErrSdkDecisionConflict, CompletedError(await host.WaitForCallAsync(Catalog.MethodEventsCompleted)));
    }

    [Fact]
    public async Task InterceptingWithoutDeclaringItIsRefusedAndTheAckWentOutFirst()
    {
        await using var host = await Started(Guard(ctx => ctx.Intercept(), intercepts: false));
        var ack = Ack(await Send(host, "e1"));
        Assert.True(ack.Accepted);
        Assert.False(ack.InterceptedOrDefault);
        Assert.Equal(Catalog.ErrSdkInterceptUndeclared, CompletedError(await host.WaitForCallAsync(Catalog.MethodEventsCompleted)));
    }

    [Fact]
    public async Task PassIsANoOpForAPluginThatDoesNotIntercept()
    {
        var passed = false;
        await using var host = await Started(Guard(ctx => { ctx.Pass(); passed = !ctx.Intercepted; }, intercepts: false));
        Assert.True(Ack(await Send(host, "e1")).Accepted);
        _release.SetResult();
        Assert.Null(CompletedError(await host.WaitForCallAsync(Catalog.MethodEventsCompleted)));
        Assert.True(passed);
    }

    [Fact]
    public async Task AnInterceptorThatFailsBeforeDecidingDeclinesWithTheErrorAndReportsNoCompletion()
    {
        await using var host = await Started(Guard(_ => { }));
        var ack = Ack(await Send(host, "e1", "fail"));
        Assert.False(ack.Accepted);
        Assert.Equal("guard.broken", ack.Error!.Code);
        // plugin.stop waits for every completion the plugin sends; none may be for the declined event.
        await host.RequestAsync(Catalog.MethodPluginStop, new JsonObject { ["graceMilliseconds"] = 2000 });
        Assert.Equal(0, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.DoesNotContain(host.Calls, c => c.Method == Catalog.MethodEventsCompleted);
    }

    [Fact]
    public async Task AnInterceptorWhoseManifestLacksTheInterceptPermissionIsRefusedAtTheHandshake()
    {
        await using var host = TestHost.Start(Guard(ctx => ctx.Intercept(), permissions: "[\"messages.reply\"]"));
        var init = await host.InitializeAsync();
        Assert.Equal(Catalog.RpcPluginError, init.ErrorCode);
        Assert.StartsWith(Catalog.ErrSdkInterceptPermissionMissing + ":", init.ErrorMessage);
        Assert.Equal(1, await host.ExitCode.WaitAsync(TimeSpan.FromSeconds(10)));
    }

    [Fact]
    public void TheBuilderSaysWhetherThePluginIntercepts()
    {
        Assert.True(new PluginBuilder(Id).Intercepts().Build().Intercepts);
        Assert.False(new PluginBuilder(Id).Build().Intercepts);
    }

    // HTTP: the decision travels in the response; the manifest declares InterceptMessages.

    private async Task<(HttpManifest Manifest, MessageResponse Response)> OverHttp(Plugin plugin, string command = "echo")
    {
        _release.TrySetResult();
        await using var endpoint = new HttpPluginEndpoint(plugin, new HttpPluginOptions
        {
            Secrets = HostSecrets.Static(HttpEndpointTests.Secret),
            ManifestPath = HttpEndpointTests.WriteManifest(_dir),
            Log = (_, _) => { },
        });
        var manifest = JsonSerializer.Deserialize(endpoint.GetManifest(_ => null).Body, WireJsonContext.Default.HttpManifest)!;
        var body = Encoding.UTF8.GetBytes(TestHost.MessageEvent("e1", $"/{command} x", command, "x").ToJsonString());
        var headers = HttpEndpointTests.Signed(body, DateTimeOffset.UtcNow, "d-1");
        var answer = await endpoint.PostEventAsync(name => headers.TryGetValue(name, out var v) ? v : null, body);
        Assert.Equal(200, answer.Status);
        return (manifest, JsonSerializer.Deserialize(answer.Body, WireJsonContext.Default.MessageResponse)!);
    }

    [Fact]
    public async Task OverHttpAnInterceptorDeclaresInterceptMessagesAndAnswersIntercepted()
    {
        var (manifest, response) = await OverHttp(Guard(ctx => ctx.Intercept()));
        Assert.Equal(Catalog.CapabilityInterceptMessages, manifest.Capabilities & Catalog.CapabilityInterceptMessages);
        Assert.DoesNotContain(Catalog.PermissionMessagesIntercept, manifest.Permissions!);
        Assert.True(response.Accepted);
        Assert.True(response.Intercepted);
        Assert.Single(response.OutboundMessages);
    }

    [Fact]
    public async Task OverHttpAPluginThatDoesNotInterceptNeitherDeclaresNorAnswersIt()
    {
        var (manifest, response) = await OverHttp(Guard(ctx => ctx.Intercept(), intercepts: false));
        Assert.Equal(0, manifest.Capabilities & Catalog.CapabilityInterceptMessages);
        Assert.False(response.Accepted);
        Assert.False(response.Intercepted);
        Assert.Equal(Catalog.ErrSdkInterceptUndeclared, response.Error!.Code);
    }

    [Fact]
    public async Task OverHttpPassAndAHandlerThatEndsUndecidedDoNotIntercept()
    {
        var (_, passed) = await OverHttp(Guard(ctx => ctx.Pass()));
        Assert.True(passed.Accepted);
        Assert.False(passed.Intercepted);
        var (_, failed) = await OverHttp(Guard(_ => { }), "fail");
        Assert.False(failed.Accepted);
        Assert.False(failed.Intercepted);
        Assert.Equal("guard.broken", failed.Error!.Code);
    }
}

/// <summary>
/// The shared vectors of the decision: event-ack (the stdio ACK) and message-response (the HTTP answer). The SDK
/// writes these documents and the host validates them, so only the valid cases apply here: each decodes into the
/// wire type the SDK writes with and keeps its decision (accepted, intercepted with its default, error); an ACK also
/// encodes back to the same decision. The invalid cases are the host's (libs/protocol/src/vectors.spec.ts).
/// </summary>
public class DecisionVectorTests
{
    public static IEnumerable<object[]> AckNames => Vectors.Cases("event-ack.json").Where(c => (bool)c!["expect"]!["valid"]!).Select(c => new object[] { (string)c!["name"]! });
    public static IEnumerable<object[]> ResponseNames => Vectors.Cases("message-response.json").Where(c => (bool)c!["expect"]!["valid"]!).Select(c => new object[] { (string)c!["name"]! });

    [Theory]
    [MemberData(nameof(AckNames))]
    public void EventAckKeepsTheDecision(string name)
    {
        var c = Vectors.Case("event-ack.json", name);
        var input = c["input"]!.AsObject();
        var ack = JsonSerializer.Deserialize(input.ToJsonString(), WireJsonContext.Default.EventAck)!;
        Assert.Equal((string)input["eventId"]!, ack.EventId);
        Assert.Equal((bool)input["accepted"]!, ack.Accepted);
        Assert.Equal(input["intercepted"] is { } i && (bool)i, ack.InterceptedOrDefault);
        if (c["expect"]!["output"]?["intercepted"] is { } expected) Assert.Equal((bool)expected, ack.InterceptedOrDefault);
        Assert.Equal((string?)input["error"]?["code"], ack.Error?.Code);
        var again = JsonSerializer.Deserialize(JsonSerializer.Serialize(ack, WireJsonContext.Default.EventAck), WireJsonContext.Default.EventAck)!;
        Assert.Equal((ack.Accepted, ack.InterceptedOrDefault, ack.Error?.Code), (again.Accepted, again.InterceptedOrDefault, again.Error?.Code));
    }

    [Theory]
    [MemberData(nameof(ResponseNames))]
    public void MessageResponseKeepsTheDecision(string name)
    {
        var input = Vectors.Case("message-response.json", name)["input"]!.AsObject();
        var response = JsonSerializer.Deserialize(input.ToJsonString(), WireJsonContext.Default.MessageResponse)!;
        Assert.Equal((bool)input["accepted"]!, response.Accepted);
        Assert.Equal((bool)input["intercepted"]!, response.Intercepted);
        Assert.Equal(input["outboundMessages"]!.AsArray().Count, response.OutboundMessages.Count);
        Assert.Equal((string?)input["error"]?["code"], response.Error?.Code);
        // Encoding: the endpoint writes "error" even when null (the wire context leaves nulls out, and the field is
        // required); the HTTP tests decode the endpoint's own answers with this same type.
    }
}
