using System.Text.Json;
using HostSdk.Wire;

namespace HostSdk.Tests;

public class WireTests
{
    [Fact]
    public void MessagePartsRoundTripThroughTheirBranches()
    {
        var message = new OutgoingMessage
        {
            Format = "markdown",
            Parts = [Text.Of("a"), Mention.User("U-1", "Al"), Mention.Everyone(), new MessagePartComposite { Parts = [Text.Literal("b")] }],
        };
        var json = JsonSerializer.Serialize(message, WireJsonContext.Default.OutgoingMessage);
        Assert.Contains("\"type\":\"mention\",\"target\":\"everyone\"", json);
        var back = JsonSerializer.Deserialize(json, WireJsonContext.Default.OutgoingMessage)!;
        Assert.IsType<MessagePartText>(back.Parts[0]);
        Assert.Equal("U-1", Assert.IsType<MessagePartMentionUser>(back.Parts[1]).Id);
        Assert.IsType<MessagePartMentionEveryone>(back.Parts[2]);
        Assert.True(Assert.IsType<MessagePartText>(Assert.IsType<MessagePartComposite>(back.Parts[3]).Parts[0]).Literal);
    }

    [Theory]
    [InlineData("{\"type\":\"text\",\"text\":\"a\",\"extra\":1}")]
    [InlineData("{\"type\":\"picture\"}")]
    [InlineData("{\"type\":\"mention\",\"target\":\"robot\",\"id\":\"x\"}")]
    [InlineData("{\"type\":\"text\"}")]
    [InlineData("[1]")]
    public void BadPartsAreRefused(string part)
    {
        Assert.ThrowsAny<JsonException>(() => JsonSerializer.Deserialize("{\"parts\":[" + part + "]}", WireJsonContext.Default.OutgoingMessage));
    }

    [Fact]
    public void StrictTypesRefuseUnknownKeysAndOpenOnesIgnoreThem()
    {
        Assert.ThrowsAny<JsonException>(() => JsonSerializer.Deserialize("{\"parts\":[],\"color\":\"red\"}", WireJsonContext.Default.OutgoingMessage));
        var ack = JsonSerializer.Deserialize("{\"eventId\":\"e\",\"accepted\":true,\"later\":1}", WireJsonContext.Default.EventAck)!;
        Assert.True(ack.Accepted);
        Assert.False(ack.InterceptedOrDefault);
    }

    [Fact]
    public void TheCataloguesAreConstants()
    {
        Assert.Equal("message.mention.unsupported_format", Catalog.CodeMessageMentionUnsupportedFormat);
        Assert.Equal(2, Catalog.ProtocolVersion);
        Assert.Equal("--host-stdio", Catalog.StdioFlag);
        Assert.NotNull(Catalog.LookupError(Catalog.CodeFramingPayloadTooLarge));
        Assert.Contains(Catalog.RpcCodes, c => c.Code == Catalog.RpcOverloaded);
    }
}
