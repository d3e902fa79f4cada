using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using HostSdk.AspNetCore;
using HostSdk.Http;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>The worked example of docs/protocol/http-signing.md, read from the page itself so the two cannot drift.</summary>
public class SigningDocTests
{
    private static string Doc
    {
        get
        {
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir != null; dir = dir.Parent)
            {
                var file = Path.Combine(dir.FullName, "docs", "protocol", "http-signing.md");
                if (File.Exists(file)) return File.ReadAllText(file);
            }
            throw new FileNotFoundException("docs/protocol/http-signing.md is not above " + AppContext.BaseDirectory);
        }
    }

    private static string Example => Doc[Doc.IndexOf("## Worked example", StringComparison.Ordinal)..];

    private static string Cell(string row) => Regex.Match(Example, $@"^\| {Regex.Escape(row)} \| `([^`]*)`", RegexOptions.Multiline).Groups[1].Value;

    [Fact]
    public void SignsTheWorkedExampleAsThePageSays()
    {
        var secret = Regex.Match(Doc, @"Secret \(as shown at registration\): `([^`]+)`").Groups[1].Value;
        var ts = Cell("`x-host-timestamp`").Split(' ')[0];
        var id = Cell("`x-host-delivery-id`");
        var body = Encoding.UTF8.GetBytes(Cell("raw body"));
        Assert.Equal(43, secret.Length);
        Assert.Equal(Cell("`x-host-signature`"), HostSignature.Sign(secret, ts, id, body));
        var empty = Regex.Match(Doc, @"over an empty body \(a manifest GET\) give\s+`([^`]+)`").Groups[1].Value;
        Assert.Equal(empty, HostSignature.Sign(secret, ts, id, []));
        var now = DateTimeOffset.FromUnixTimeSeconds(long.Parse(ts));
        Assert.True(HostSignature.Verify(ts, id, Cell("`x-host-signature`"), body, [secret], TimeSpan.FromSeconds(300), now).IsValid);
    }
}

/// <summary>The HTTP transport without a server: every refusal with its code and status, and the response of a handler.</summary>
public sealed class HttpEndpointTests : IAsyncDisposable
{
    internal const string Secret = "kR3d9Zq0bV7xN2mW5tY8uA1sD4fG6hJ9kL0pO3iU7yE";
    internal const string PluginId = "com.example.http-echo";
    private readonly string _dir = Directory.CreateTempSubdirectory("hostsdk-http-").FullName;
    private DateTimeOffset _now = DateTimeOffset.FromUnixTimeSeconds(1767225600);
    private HttpPluginEndpoint? _endpoint;

    public async ValueTask DisposeAsync()
    {
        if (_endpoint != null) await _endpoint.DisposeAsync();
        Directory.Delete(_dir, recursive: true);
    }

    internal static string WriteManifest(string dir, string permissions = "[\"messages.reply\", \"messages.send\", \"messages.intercept\"]")
    {
        var path = Path.Combine(dir, "manifest.json");
        File.WriteAllText(path, $$"""
            {
              "pluginId": "{{PluginId}}", "name": "HTTP echo", "version": "1.0.0", "author": "Tests", "protocolVersion": 2, "sdkVersion": "2.0.0",
              "transport": { "type": "stdio-jsonrpc", "stdio": { "command": "dotnet", "args": ["Echo.dll", "--host-stdio"] } },
              "eventSubscriptions": [{ "eventType": "message.created" }],
              "permissions": {{permissions}},
              "commands": [{ "name": "echo" }, { "name": "slow" }, { "name": "fail" }, { "name": "many" }],
              "settings": { "configSchema": { "greeting": { "type": "string", "label": "Greeting", "defaultValue": "hi" } } }
            }
            """);
        return path;
    }

    internal static Plugin EchoPlugin(TaskCompletionSource? slowStarted = null, TaskCompletionSource? release = null) =>
        new PluginBuilder(PluginId)
            .Command("echo", ctx => ctx.ReplyMarkdownAsync(Mention.User(ctx.Sender), Text.Of($" {ctx.Settings.GetString("greeting")}: "), Text.Literal(ctx.Args)))
            .Command("slow", async ctx =>
            {
                slowStarted?.TrySetResult();
                await release!.Task.WaitAsync(ctx.CancellationToken);
                await ctx.ReplyAsync(Text.Of("done"));
            })
            .Command("fail", _ => throw new HandlerException("plugin.echo_broken", "broken on purpose"))
            .Command("many", async ctx =>
            {
                for (var i = 0; i < Catalog.LimitMaxOutboundMessages + 1; i++) await ctx.ReplyAsync(Text.Of($"#{i}"));
            })
            .Build();

    private HttpPluginEndpoint Endpoint(Plugin? plugin = null, Action<HttpPluginOptions>? configure = null)
    {
        var options = new HttpPluginOptions
        {
            Secrets = HostSecrets.Static(Secret),
            ManifestPath = WriteManifest(_dir),
            Now = () => _now,
            Log = (_, _) => { },
        };
        configure?.Invoke(options);
        _endpoint = new HttpPluginEndpoint(plugin ?? EchoPlugin(), options);
        return _endpoint;
    }

    internal static byte[] Event(string eventId, string command, string args = "") =>
        Encoding.UTF8.GetBytes(TestHost.MessageEvent(eventId, $"/{command} {args}", command, args).ToJsonString());

    internal static Dictionary<string, string> Signed(byte[] body, DateTimeOffset at, string deliveryId, string secret = Secret)
    {
        var ts = at.ToUnixTimeSeconds().ToString();
        return new Dictionary<string, string>
        {
            [Catalog.HttpHeaderTimestamp] = ts,
            [Catalog.HttpHeaderDeliveryId] = deliveryId,
            [Catalog.HttpHeaderSignature] = HostSignature.Sign(secret, ts, deliveryId, body),
            [Catalog.HttpHeaderPluginId] = PluginId,
        };
    }

    private static Func<string, string?> Headers(Dictionary<string, string> h) => name => h.TryGetValue(name, out var v) ? v : null;

    private static (string Code, JsonNode Error) ErrorOf(HttpAnswer a)
    {
        var error = JsonNode.Parse(a.Body)!["error"]!;
        return ((string)error["code"]!, error);
    }

    [Fact]
    public async Task ASignedEventIsHandledAndAnsweredWithTheOutboundMessages()
    {
        var endpoint = Endpoint();
        var body = Event("e1", "echo", "*hi*");
        var answer = await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body);
        Assert.Equal(200, answer.Status);
        var response = JsonSerializer.Deserialize(answer.Body, WireJsonContext.Default.MessageResponse)!;
        Assert.True(response.Accepted);
        Assert.False(response.Intercepted);
        Assert.Null(response.Error);
        var message = Assert.Single(response.OutboundMessages);
        Assert.Equal("markdown", message.Format);
        Assert.Null(message.Target);
        Assert.Equal("U-1", Assert.IsType<MessagePartMentionUser>(message.Parts[0]).Id);
        Assert.Equal(" hi: ", Assert.IsType<MessagePartText>(message.Parts[1]).Text);
    }

    [Fact]
    public void TheManifestIsDerivedFromManifestJsonAndNeedsNoSignature()
    {
        var answer = Endpoint().GetManifest(_ => null);
        Assert.Equal(200, answer.Status);
        var manifest = JsonSerializer.Deserialize(answer.Body, WireJsonContext.Default.HttpManifest)!;
        Assert.Equal(PluginId, manifest.PluginId);
        Assert.Equal(Catalog.CapabilityReceiveMessages | Catalog.CapabilitySendMessages | Catalog.CapabilityHttpTransport, manifest.Capabilities);
        Assert.Equal(["messages.reply", "messages.send"], manifest.Permissions);
        Assert.Equal(4, manifest.Commands!.Count);
    }

    [Fact]
    public void WithVerifyManifestRequestsTheManifestNeedsASignatureToo()
    {
        var endpoint = Endpoint(configure: o => o.VerifyManifestRequests = true);
        Assert.Equal((401, "signature.missing"), (endpoint.GetManifest(_ => null).Status, ErrorOf(endpoint.GetManifest(_ => null)).Code));
        Assert.Equal(200, endpoint.GetManifest(Headers(Signed([], _now, "m-1"))).Status);
    }

    public static TheoryData<string, string> BadSignatures => new()
    {
        { "missing", "signature.missing" },
        { "malformed-timestamp", "signature.malformed" },
        { "malformed-signature", "signature.malformed" },
        { "malformed-delivery-id", "signature.malformed" },
        { "old", "signature.expired" },
        { "future", "signature.expired" },
        { "wrong-secret", "signature.invalid" },
        { "tampered-body", "signature.invalid" },
        { "uppercase-hex", "signature.malformed" },
    };

    [Theory]
    [MemberData(nameof(BadSignatures))]
    public async Task BadSignaturesAreRefusedWith401AndTheHandlerDoesNotRun(string how, string code)
    {
        var ran = false;
        var plugin = new PluginBuilder(PluginId).Command("echo", _ => { ran = true; return Task.CompletedTask; }).Build();
        var endpoint = Endpoint(plugin);
        var body = Event("e1", "echo", "x");
        var headers = how switch
        {
            "old" => Signed(body, _now.AddSeconds(-301), "d-1"),
            "future" => Signed(body, _now.AddSeconds(301), "d-1"),
            "wrong-secret" => Signed(body, _now, "d-1", "another-secret-of-the-same-length-0123456789"),
            _ => Signed(body, _now, "d-1"),
        };
        switch (how)
        {
            case "missing": headers.Remove(Catalog.HttpHeaderSignature); break;
            case "malformed-timestamp": headers[Catalog.HttpHeaderTimestamp] = "17672256OO"; break;
            case "malformed-signature": headers[Catalog.HttpHeaderSignature] = "v2=" + new string('0', 64); break;
            case "malformed-delivery-id": headers[Catalog.HttpHeaderDeliveryId] = "d 1/.."; break;
            case "uppercase-hex": headers[Catalog.HttpHeaderSignature] = headers[Catalog.HttpHeaderSignature].ToUpperInvariant().Replace("V1=", "v1="); break;
            case "tampered-body": body = Event("e1", "echo", "y"); break;
        }
        var answer = await endpoint.PostEventAsync(Headers(headers), body);
        Assert.Equal((401, code), (answer.Status, ErrorOf(answer).Code));
        Assert.False(ran);
    }

    [Fact]
    public async Task AReplayIsRefusedButAnotherDeliveryOfTheSameBodyIsNot()
    {
        var endpoint = Endpoint();
        var body = Event("e1", "echo", "x");
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body)).Status);
        var replay = await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body);
        Assert.Equal((401, "signature.replayed"), (replay.Status, ErrorOf(replay).Code));
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-2")), body)).Status);
        // Once the window has passed, the id may come again (it would be refused as expired if it were old).
        _now = _now.AddSeconds(400);
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body)).Status);
    }

    [Fact]
    public async Task AnySignatureOfTheListMayMatchAndAnySecretOfTheSource()
    {
        var endpoint = Endpoint(configure: o => o.Secrets = HostSecrets.Static("old-secret", Secret));
        var body = Event("e1", "echo", "x");
        var headers = Signed(body, _now, "d-1");
        headers[Catalog.HttpHeaderSignature] = "v1=" + new string('a', 64) + ", " + headers[Catalog.HttpHeaderSignature];
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(headers), body)).Status);
    }

    [Fact]
    public async Task WithoutASecretEventsAreRefusedAndASecretFileIsReadWhenItAppears()
    {
        var file = Path.Combine(_dir, "signing-secret.txt");
        var endpoint = Endpoint(configure: o => o.Secrets = HostSecrets.FromFile(file));
        var body = Event("e1", "echo", "x");
        var unset = await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body);
        Assert.Equal((401, "signature.secret_unset"), (unset.Status, ErrorOf(unset).Code));
        File.WriteAllText(file, Secret + "\n");
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body)).Status);
    }

    [Fact]
    public async Task OtherRefusalsHaveTheirCodes()
    {
        var endpoint = Endpoint(configure: o => o.MaxBodyBytes = 4096);
        var body = Event("e1", "echo", "x");
        var other = Signed(body, _now, "d-1");
        other[Catalog.HttpHeaderPluginId] = "com.example.other";
        var mismatch = await endpoint.PostEventAsync(Headers(other), body);
        Assert.Equal((400, "plugin.id_mismatch"), (mismatch.Status, ErrorOf(mismatch).Code));

        var big = new byte[4097];
        var tooLarge = await endpoint.PostEventAsync(Headers(Signed(big, _now, "d-2")), big);
        Assert.Equal((413, "http.body_too_large"), (tooLarge.Status, ErrorOf(tooLarge).Code));

        var notJson = "{\"eventId\": 1}"u8.ToArray();
        var invalid = await endpoint.PostEventAsync(Headers(Signed(notJson, _now, "d-3")), notJson);
        Assert.Equal((400, "event.invalid"), (invalid.Status, ErrorOf(invalid).Code));
        Assert.NotNull(ErrorOf(invalid).Error["details"]!["issues"]);

        var node = JsonNode.Parse(Event("e4", "echo", "x"))!;
        node["eventType"] = "message.deleted";
        var wrongType = Encoding.UTF8.GetBytes(node.ToJsonString());
        var wrong = await endpoint.PostEventAsync(Headers(Signed(wrongType, _now, "d-4")), wrongType);
        Assert.Equal("eventType", (string)ErrorOf(wrong).Error["details"]!["issues"]![0]!["path"]!);

        Assert.Equal((404, "http.not_found"), (HttpPluginEndpoint.NotFound("/x").Status, ErrorOf(HttpPluginEndpoint.NotFound("/x")).Code));
        var method = HttpPluginEndpoint.MethodNotAllowed(Catalog.HttpPathMessageEvents, "POST");
        Assert.Equal((405, "POST"), (method.Status, method.Headers["Allow"]));
    }

    [Fact]
    public async Task HandlerFailuresAndTheOutboundLimitAreReportedInTheResponse()
    {
        var endpoint = Endpoint();
        var fail = Event("e1", "fail");
        var failed = JsonSerializer.Deserialize((await endpoint.PostEventAsync(Headers(Signed(fail, _now, "d-1")), fail)).Body, WireJsonContext.Default.MessageResponse)!;
        Assert.False(failed.Accepted);
        Assert.Equal("plugin.echo_broken", failed.Error!.Code);

        var many = Event("e2", "many");
        var limited = JsonSerializer.Deserialize((await endpoint.PostEventAsync(Headers(Signed(many, _now, "d-2")), many)).Body, WireJsonContext.Default.MessageResponse)!;
        Assert.Equal(Catalog.LimitMaxOutboundMessages, limited.OutboundMessages.Count);
        Assert.Equal(Catalog.CodePluginHandlerFailed, limited.Error!.Code);
        Assert.Contains(Catalog.ErrSdkOutboundLimit, limited.Error.Message);

        var nobody = Encoding.UTF8.GetBytes(TestHost.MessageEvent("e3", "just chatting").ToJsonString());
        var declined = JsonSerializer.Deserialize((await endpoint.PostEventAsync(Headers(Signed(nobody, _now, "d-3")), nobody)).Body, WireJsonContext.Default.MessageResponse)!;
        Assert.False(declined.Accepted);
        Assert.Null(declined.Error);
    }

    [Fact]
    public async Task BeyondTheConcurrencyLimitTheAnswerIs503WithoutRecordingTheDelivery()
    {
        var started = new TaskCompletionSource();
        var release = new TaskCompletionSource();
        var endpoint = Endpoint(EchoPlugin(started, release), o => o.MaxConcurrentEvents = 1);
        var slow = Event("e1", "slow");
        var first = endpoint.PostEventAsync(Headers(Signed(slow, _now, "d-1")), slow);
        await started.Task.WaitAsync(TimeSpan.FromSeconds(10));
        var echo = Event("e2", "echo", "x");
        var busy = await endpoint.PostEventAsync(Headers(Signed(echo, _now, "d-2")), echo);
        Assert.Equal((503, "http.overloaded", "1"), (busy.Status, ErrorOf(busy).Code, busy.Headers["Retry-After"]));
        release.SetResult();
        Assert.Equal(200, (await first).Status);
        // The refused delivery was not recorded, so the host's retry with the same id goes through.
        Assert.Equal(200, (await endpoint.PostEventAsync(Headers(Signed(echo, _now, "d-2")), echo)).Status);
    }

    [Fact]
    public async Task DisposeCancelsRunningHandlersAndRefusesNewEvents()
    {
        var started = new TaskCompletionSource();
        var stopped = false;
        var plugin = new PluginBuilder(PluginId)
            .Command("slow", async ctx => { started.SetResult(); await Task.Delay(Timeout.Infinite, ctx.CancellationToken); })
            .OnStop(_ => { stopped = true; return Task.CompletedTask; })
            .Build();
        var endpoint = Endpoint(plugin);
        var slow = Event("e1", "slow");
        var running = endpoint.PostEventAsync(Headers(Signed(slow, _now, "d-1")), slow);
        await started.Task.WaitAsync(TimeSpan.FromSeconds(10));
        await endpoint.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        var answer = JsonSerializer.Deserialize((await running).Body, WireJsonContext.Default.MessageResponse)!;
        Assert.Equal(Catalog.ErrSdkEventCancelled, answer.Error!.Code);
        Assert.True(stopped);
        var late = await endpoint.PostEventAsync(Headers(Signed(slow, _now, "d-2")), slow);
        Assert.Equal((503, "http.overloaded"), (late.Status, ErrorOf(late).Code));
    }

    [Fact]
    public async Task AFailedStartIsAnsweredPluginStartFailed()
    {
        var plugin = new PluginBuilder(PluginId).OnStart(_ => throw new InvalidOperationException("no database"))
            .Command("echo", _ => Task.CompletedTask).Build();
        var endpoint = Endpoint(plugin);
        var body = Event("e1", "echo");
        var answer = await endpoint.PostEventAsync(Headers(Signed(body, _now, "d-1")), body);
        Assert.Equal((503, "plugin.start_failed"), (answer.Status, ErrorOf(answer).Code));
    }

    [Fact]
    public void BadOptionsAreRefusedWithSdkHttpConfigInvalid()
    {
        Assert.Contains(Catalog.ErrSdkHttpConfigInvalid, Assert.Throws<InvalidOperationException>(() =>
            new HttpPluginEndpoint(EchoPlugin(), new HttpPluginOptions { ManifestPath = WriteManifest(_dir) })).Message);
        Assert.Contains("does not exist", Assert.Throws<InvalidOperationException>(() =>
            new HttpPluginEndpoint(EchoPlugin(), new HttpPluginOptions { Secrets = HostSecrets.Static(Secret), ManifestPath = Path.Combine(_dir, "none.json") })).Message);
        Assert.Contains("com.example.other", Assert.Throws<InvalidOperationException>(() =>
            new HttpPluginEndpoint(new PluginBuilder("com.example.other").Build(), new HttpPluginOptions { Secrets = HostSecrets.Static(Secret), ManifestPath = WriteManifest(_dir) })).Message);
    }

    [Fact]
    public void TheReplayGuardStaysBounded()
    {
        var guard = new ReplayGuard(maxEntries: 3);
        for (var i = 0; i < 10; i++) Assert.True(guard.Remember($"d-{i}", _now.AddMinutes(5), _now));
        Assert.Equal(3, guard.Count);
        Assert.False(guard.Remember("d-9", _now.AddMinutes(5), _now));
    }
}

/// <summary>The ASP.NET Core endpoint over real loopback HTTP: MapHostPlugin through HostPluginHttpHost.RunAsync and Kestrel.</summary>
public sealed class AspNetCoreTests
{
    [Fact]
    public async Task TheServiceAnswersSignedEventsAndRefusesBadSignaturesMethodsAndPaths()
    {
        var dir = Directory.CreateTempSubdirectory("hostsdk-aspnet-").FullName;
        try
        {
            HttpEndpointTests.WriteManifest(dir);
            await using var server = await TestServer.StartAsync(dir);
            using var http = new HttpClient { BaseAddress = new Uri(server.Url) };

            var manifest = await http.GetAsync(Catalog.HttpPathManifest);
            Assert.Equal(HttpStatusCode.OK, manifest.StatusCode);
            Assert.Equal(HttpEndpointTests.PluginId, (string)JsonNode.Parse(await manifest.Content.ReadAsStringAsync())!["pluginId"]!);

            // No secret file yet: signature.secret_unset; then the file appears and no restart is needed.
            var body = HttpEndpointTests.Event("e1", "echo", "**bold**");
            var now = DateTimeOffset.UtcNow;
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.secret_unset"), await Post(http, body, HttpEndpointTests.Signed(body, now, "d-0")));
            File.WriteAllText(Path.Combine(dir, "signing-secret.txt"), HttpEndpointTests.Secret);

            var ok = await Post(http, body, HttpEndpointTests.Signed(body, now, "d-1"));
            Assert.Equal(HttpStatusCode.OK, ok.Status);
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.invalid"),
                await Post(http, body, HttpEndpointTests.Signed(body, now, "d-2", "not-the-secret-not-the-secret-not-the-secre")));
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.replayed"), await Post(http, body, HttpEndpointTests.Signed(body, now, "d-1")));
            var tampered = HttpEndpointTests.Event("e1", "echo", "**other**");
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.invalid"), await Post(http, tampered, HttpEndpointTests.Signed(body, now, "d-3")));
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.missing"), await Post(http, body, []));
            Assert.Equal((HttpStatusCode.Unauthorized, "signature.expired"), await Post(http, body, HttpEndpointTests.Signed(body, now.AddMinutes(-10), "d-4")));

            var get = await http.GetAsync(Catalog.HttpPathMessageEvents);
            Assert.Equal(HttpStatusCode.MethodNotAllowed, get.StatusCode);
            Assert.Equal("POST", string.Join(",", get.Content.Headers.Allow));
            var big = new byte[Catalog.LimitMaxPayloadBytes + 1];
            Assert.Equal(HttpStatusCode.RequestEntityTooLarge, (await Post(http, big, HttpEndpointTests.Signed(big, now, "d-5"))).Status);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static async Task<(HttpStatusCode Status, string Code)> Post(HttpClient http, byte[] body, Dictionary<string, string> headers)
    {
        using var request = new HttpRequestMessage(HttpMethod.Post, Catalog.HttpPathMessageEvents) { Content = new ByteArrayContent(body) };
        request.Content.Headers.ContentType = new("application/json");
        foreach (var (k, v) in headers) request.Headers.TryAddWithoutValidation(k, v);
        using var response = await http.SendAsync(request);
        var text = await response.Content.ReadAsStringAsync();
        if (response.StatusCode == HttpStatusCode.OK)
        {
            var answer = JsonSerializer.Deserialize(text, WireJsonContext.Default.MessageResponse)!;
            Assert.True(answer.Accepted);
            Assert.Equal("**bold**", Assert.IsType<MessagePartText>(answer.OutboundMessages[0].Parts[2]).Text);
            return (response.StatusCode, "");
        }
        return (response.StatusCode, (string)JsonNode.Parse(text)!["error"]!["code"]!);
    }

    /// <summary>HostPluginHttpHost.RunAsync in this process, on a free loopback port, stopped by a token.</summary>
    private sealed class TestServer : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private Task<int>? _run;
        public string Url { get; private set; } = "";

        public static async Task<TestServer> StartAsync(string dir)
        {
            var server = new TestServer();
            var options = new HttpPluginOptions
            {
                Secrets = HostSecrets.FromFile(Path.Combine(dir, "signing-secret.txt")),
                ManifestPath = Path.Combine(dir, "manifest.json"),
                Log = (_, _) => { },
            };
            var listening = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
            server._run = HostPluginHttpHost.RunAsync(HttpEndpointTests.EchoPlugin(), ["--http", "127.0.0.1:0"], options,
                url => listening.TrySetResult(url), server._stop.Token);
            server.Url = await listening.Task.WaitAsync(TimeSpan.FromSeconds(30));
            return server;
        }

        public async ValueTask DisposeAsync()
        {
            _stop.Cancel();
            if (_run != null) Assert.Equal(0, await _run.WaitAsync(TimeSpan.FromSeconds(30)));
        }
    }
}
