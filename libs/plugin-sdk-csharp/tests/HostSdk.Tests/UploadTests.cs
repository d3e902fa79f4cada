using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using HostSdk.Http;
using HostSdk.Testing;
using HostSdk.Wire;

namespace HostSdk.Tests;

/// <summary>
/// ctx.UploadMediaAsync and Parts.ImageFromMedia / FileFromMedia (docs/protocol/v2.md 4.12 to 4.14, 7.1): the bytes go to
/// the test host over the real stdio runtime in the chunks it names; the SDK's own refusals send nothing.
/// </summary>
public sealed class UploadTests : IDisposable
{
    private const string MediaId = "media-0123456789abcdef";
    private readonly string _dir = Directory.CreateTempSubdirectory("hostsdk-upload-").FullName;

    public void Dispose() => Directory.Delete(_dir, recursive: true);

    /// <summary>A PNG signature followed by <paramref name="n"/> - 8 bytes of a repeating pattern.</summary>
    private static byte[] Png(int n)
    {
        var bytes = Enumerable.Range(0, n).Select(i => (byte)(i % 10)).ToArray();
        new byte[] { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a }.CopyTo(bytes, 0);
        return bytes;
    }

    private Plugin Uploader(Func<MessageContext, Task> handle, string permissions = "[\"messages.reply\", \"media.upload\"]") =>
        new PluginBuilder(HttpEndpointTests.PluginId)
            .Manifest(HttpEndpointTests.WriteManifest(_dir, permissions))
            .OnMessage(ctx => handle(ctx))
            .Build();

    /// <summary>Runs <paramref name="upload"/> in a message handler on the test host and returns what it threw (null when nothing).</summary>
    private async Task<(TestHost Host, Exception? Error)> Run(Func<MessageContext, Task> upload, string? permissions = null, int? maxChunkBytes = null,
        Func<RecordedCall, HostAnswer?>? answer = null)
    {
        Exception? error = null;
        var plugin = Uploader(async ctx =>
        {
            try
            {
                await upload(ctx);
            }
            catch (Exception e)
            {
                error = e;
            }
        }, permissions ?? "[\"messages.reply\", \"media.upload\"]");
        var host = TestHost.Start(plugin);
        if (maxChunkBytes is { } max) host.Media.MaxChunkBytes = max;
        host.Answer = answer;
        var init = await host.InitializeAsync();
        Assert.False(init.IsError, init.ErrorMessage);
        Assert.False((await host.SendMessageAsync("e1", "hello")).IsError);
        await host.WaitForCallAsync(Catalog.MethodEventsCompleted);
        return (host, error);
    }

    [Fact]
    public async Task TheBytesGoInTheHostsChunksAndAnImagePartNamesThem()
    {
        var data = Png(1234);
        MediaFinishResult? media = null;
        var (host, error) = await Run(async ctx =>
        {
            media = await ctx.UploadMediaAsync(data, "image/png", "chart.png");
            await ctx.ReplyAsync(Parts.Text("chart: "), Parts.ImageFromMedia(media, alt: "a chart"));
        }, maxChunkBytes: 500);
        await using var _ = host;
        Assert.Null(error);
        var upload = Assert.Single(host.Uploads).Value;
        Assert.Equal((media!.MediaId, "image/png", "chart.png", 1234L), (upload.MediaId, upload.ContentType, upload.FileName, media.Size));
        Assert.Equal(data, upload.Bytes);
        Assert.Equal([500, 500, 234], upload.Chunks);
        var offsets = host.Calls.Where(c => c.Method == Catalog.MethodMediaChunk).Select(c => c.Params.GetProperty("offset").GetInt64());
        Assert.Equal([0L, 500L, 1000L], offsets);
        var reply = await host.WaitForCallAsync(Catalog.MethodMessagesReply);
        var image = reply.Params.GetProperty("message").GetProperty("parts")[1];
        Assert.Equal((media.MediaId, "a chart", false), (image.GetProperty("mediaId").GetString(), image.GetProperty("alt").GetString(), image.TryGetProperty("url", out JsonElement _)));
    }

    public static TheoryData<string, int, string> SdkRefusals => new()
    {
        { "[\"messages.reply\"]", 100, Catalog.CodeMessagePermissionDenied },
        { "[\"messages.reply\", \"media.upload\"]", Catalog.LimitMaxMediaUploadBytes + 1, Catalog.CodeMessageMediaTooLarge },
        { "[\"messages.reply\", \"media.upload\"]", 0, Catalog.CodeMessageMediaUploadInvalid },
    };

    [Theory]
    [MemberData(nameof(SdkRefusals))]
    public async Task TheSdkRefusesBeforeAnythingIsSent(string permissions, int size, string code)
    {
        var (host, error) = await Run(ctx => ctx.UploadMediaAsync(new byte[size], "application/octet-stream"), permissions);
        await using var _ = host;
        var refused = Assert.IsType<MessageException>(error);
        Assert.Equal((code, false), (refused.Code, refused.FromHost));
        Assert.DoesNotContain(host.Calls, c => c.Method.StartsWith("media.", StringComparison.Ordinal));
    }

    [Fact]
    public async Task TheTestHostChecksTheTypeAndTheMediaIdsAsTheHostDoes()
    {
        var codes = new List<string>();
        async Task Refused(Func<Task> call)
        {
            var e = await Assert.ThrowsAsync<MessageException>(call);
            Assert.True(e.FromHost, e.Message);
            codes.Add(e.Code);
        }
        var (host, error) = await Run(async ctx =>
        {
            await Refused(() => ctx.UploadMediaAsync([0xff, 0xd8, 0xff, 0xe0, 0, 0], "image/png")); // bytes of another type
            await Refused(() => ctx.UploadMediaAsync(Png(64), "image/bmp")); // an image type the host does not take
            await Refused(() => ctx.UploadMediaAsync("not a pdf"u8.ToArray(), "application/pdf"));
            await Refused(() => ctx.ReplyAsync(Parts.ImageFromMedia(MediaId))); // never uploaded
            var csv = await ctx.UploadMediaAsync("a,b\n1,2\n"u8.ToArray(), "text/csv"); // no signature to check: taken as declared
            await Refused(() => ctx.ReplyAsync(Parts.ImageFromMedia(csv))); // an image of bytes that are no image
        });
        await using var _ = host;
        Assert.Null(error);
        Assert.Equal([Catalog.CodeMessageMediaTypeMismatch, Catalog.CodeMessageMediaTypeMismatch, Catalog.CodeMessageMediaTypeMismatch,
            Catalog.CodeMessageMediaUnknown, Catalog.CodeMessageMediaTypeMismatch], codes);
        Assert.Equal("text/csv", Assert.Single(host.Uploads).Value.ContentType);
    }

    [Fact]
    public async Task ARefusalOfTheHostStopsTheUploadWithItsCode()
    {
        var chunks = 0;
        HostAnswer? Full(RecordedCall call) =>
            call.Method == Catalog.MethodMediaChunk && ++chunks >= 2
                ? new HostAnswer(null, Catalog.RpcMessageRejected, "the media store is full", new JsonObject { ["code"] = Catalog.CodeMessageMediaStoreFull })
                : null;
        var (host, error) = await Run(ctx => ctx.UploadMediaAsync(Png(1000), "image/png"), maxChunkBytes: 100, answer: Full);
        await using var _ = host;
        var refused = Assert.IsType<MessageException>(error);
        Assert.Equal((Catalog.CodeMessageMediaStoreFull, true), (refused.Code, refused.FromHost));
        Assert.Equal(2, host.Calls.Count(c => c.Method == Catalog.MethodMediaChunk));
        Assert.DoesNotContain(host.Calls, c => c.Method == Catalog.MethodMediaFinish);
        Assert.Empty(host.Uploads);
    }

    [Fact]
    public void TheMediaStoreAnswersEachStepAsTheHostDoes()
    {
        // Calls a plugin not built on the SDK could make: the test kit answers them as the host would.
        var store = new TestMediaStore { MaxChunkBytes = 4 };
        HostAnswer Call(string method, object parameters) => store.Answer(new RecordedCall(method, JsonSerializer.SerializeToElement(parameters)))!;
        string Code(string method, object parameters) => Call(method, parameters) is { Result: null } refused
            ? refused.ErrorData?["code"]?.GetValue<string>() ?? refused.ErrorCode.ToString()
            : "accepted";
        string Begin(string type, int size) => Call(Catalog.MethodMediaUpload, new { contentType = type, size }).Result!["uploadId"]!.GetValue<string>();
        string B64(string s) => Convert.ToBase64String(Encoding.ASCII.GetBytes(s));

        var id = Begin("text/plain", 8);
        Assert.Equal(Catalog.CodeMessageMediaUploadInvalid, Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 4, data = B64("abcd") }));
        Assert.Equal(Catalog.CodeMessageMediaUnknown, Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("abcd") })); // dropped
        id = Begin("text/plain", 8);
        Assert.Equal(Catalog.CodeMessageMediaTooLarge, Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("abcde") }));
        id = Begin("text/plain", 3);
        Assert.Equal(Catalog.CodeMessageMediaTooLarge, Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("abcd") }));
        id = Begin("text/plain", 3);
        Assert.Equal(Catalog.CodeMessageMediaUploadInvalid, Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = "a%b" }));
        id = Begin("text/plain", 8);
        Assert.Equal("accepted", Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("abcd") }));
        Assert.Equal(Catalog.CodeMessageMediaUploadInvalid, Code(Catalog.MethodMediaFinish, new { uploadId = id }));
        Assert.Equal(Catalog.CodeMessageMediaTooLarge, Code(Catalog.MethodMediaUpload, new { contentType = "text/plain", size = Catalog.LimitMaxMediaUploadBytes + 1 }));
        Assert.Equal(Catalog.RpcInvalidParams.ToString(), Code(Catalog.MethodMediaUpload, new { contentType = "Image/PNG", size = 4 }));
        id = Begin("image/gif", 4);
        Assert.Equal("accepted", Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("GIF8") }));
        Assert.Equal(Catalog.CodeMessageMediaTypeMismatch, Code(Catalog.MethodMediaFinish, new { uploadId = id }));
        id = Begin("application/pdf", 7);
        Assert.Equal("accepted", Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 0, data = B64("%PDF") }));
        Assert.Equal("accepted", Code(Catalog.MethodMediaChunk, new { uploadId = id, offset = 4, data = B64("-1.") }));
        var mediaId = Call(Catalog.MethodMediaFinish, new { uploadId = id }).Result!["mediaId"]!.GetValue<string>();
        var kept = Assert.Single(store.Uploads);
        Assert.Equal((mediaId, "%PDF-1."), (kept.Key, Encoding.ASCII.GetString(kept.Value.Bytes)));
        Assert.Null(store.Answer(new RecordedCall(Catalog.MethodLogWrite, JsonSerializer.SerializeToElement(new { }))));

        store.Permissions = ["messages.reply"];
        var denied = Call(Catalog.MethodMediaUpload, new { contentType = "text/plain", size = 3 });
        Assert.Equal((Catalog.RpcPermissionDenied, Catalog.CodeMessagePermissionDenied), (denied.ErrorCode, denied.ErrorData?["code"]?.GetValue<string>()));
    }

    [Fact]
    public async Task TheLocalChecksTakeAUrlOrAMediaIdExactlyOne()
    {
        var codes = new List<(string Code, bool FromHost)>();
        MessagePart[] bad =
        [
            new MessagePartImage(),
            new MessagePartImage { Url = "https://cdn.example.com/a.png", MediaId = MediaId },
            new MessagePartImage { MediaId = "not an id" },
            new MessagePartFile { Url = "https://cdn.example.com/a.pdf", MediaId = MediaId },
        ];
        var (host, error) = await Run(async ctx =>
        {
            foreach (var part in bad)
            {
                var e = await Assert.ThrowsAsync<MessageException>(() => ctx.ReplyAsync(part));
                codes.Add((e.Code, e.FromHost));
            }
            var media = await ctx.UploadMediaAsync(Png(64), "image/png");
            var channel = await Assert.ThrowsAsync<MessageException>(() => ctx.SendAsync(new Target { Type = "channel", Id = "C1" }, Parts.ImageFromMedia(media)));
            codes.Add((channel.Code, channel.FromHost));
        });
        await using var _ = host;
        Assert.Null(error);
        Assert.Equal([.. Enumerable.Repeat((Catalog.CodeMessagePartUnsupported, false), 4), (Catalog.CodeMessagePartUnsupportedTarget, false)], codes);
        Assert.DoesNotContain(host.Calls, c => c.Method is Catalog.MethodMessagesReply or Catalog.MethodMessagesSend);
    }

    [Fact]
    public void TheBuildersTakeAMediaIdOrItsUpload()
    {
        var image = Parts.ImageFromMedia(MediaId, "a chart");
        Assert.Equal((MediaId, (string?)null, "a chart"), (image.MediaId, image.Url, image.Alt));
        Assert.Equal((MediaId, "a.csv"), (Parts.FileFromMedia(MediaId, "a.csv").MediaId, Parts.FileFromMedia(MediaId, "a.csv").FileName));
        Assert.Equal(Catalog.CodeMessagePartUnsupported, Assert.Throws<MessageException>(() => Parts.ImageFromMedia("../../etc/passwd")).Code);
        Assert.Equal(Catalog.CodeMessagePartUnsupported, Assert.Throws<MessageException>(() => Parts.FileFromMedia("short")).Code);
    }

    [Fact]
    public async Task OverHttpTheUploadIsUnavailable()
    {
        Exception? error = null;
        var plugin = Uploader(async ctx =>
        {
            try
            {
                await ctx.UploadMediaAsync(Png(100), "image/png");
            }
            catch (Exception e)
            {
                error = e;
            }
        });
        await using var endpoint = new HttpPluginEndpoint(plugin, new HttpPluginOptions
        {
            Secrets = HostSecrets.Static(HttpEndpointTests.Secret),
            ManifestPath = HttpEndpointTests.WriteManifest(_dir),
            Log = (_, _) => { },
        });
        var body = Encoding.UTF8.GetBytes(TestHost.MessageEvent("e1", "hello").ToJsonString());
        var headers = HttpEndpointTests.Signed(body, DateTimeOffset.UtcNow, "d-1");
        var answer = await endpoint.PostEventAsync(name => headers.TryGetValue(name, out var v) ? v : null, body);
        Assert.Equal(200, answer.Status);
        Assert.Equal(Catalog.ErrSdkUploadUnavailable, Assert.IsType<PluginSdkException>(error).Code);
    }
}
