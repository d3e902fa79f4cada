using System.Text.Json.Nodes;
using System.Text.Json;

namespace HostSdk.Tests;

/// <summary>Finds the shared test vectors of libs/protocol from the test's output folder.</summary>
internal static class Vectors
{
    public static string Folder
    {
        get
        {
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir != null; dir = dir.Parent)
            {
                var candidate = Path.Combine(dir.FullName, "libs", "protocol", "vectors");
                if (Directory.Exists(candidate)) return candidate;
            }
            throw new DirectoryNotFoundException("libs/protocol/vectors is not above " + AppContext.BaseDirectory);
        }
    }

    public static JsonArray Cases(string file) => (JsonArray)JsonNode.Parse(File.ReadAllText(Path.Combine(Folder, file)))!["cases"]!;

    public static IEnumerable<object[]> Names(string file) => Cases(file).Select(c => new object[] { (string)c!["name"]! });

    public static JsonObject Case(string file, string name) => (JsonObject)Cases(file).First(c => (string)c!["name"]! == name)!;
}

/// <summary>A stream that returns one chunk per read, as a pipe delivers writes.</summary>
internal sealed class ChunkStream(IEnumerable<byte[]> chunks) : Stream
{
    private readonly Queue<byte[]> _chunks = new(chunks);
    private byte[] _current = [];
    private int _offset;

    public override int Read(byte[] buffer, int offset, int count)
    {
        if (_offset == _current.Length)
        {
            if (_chunks.Count == 0) return 0;
            _current = _chunks.Dequeue();
            _offset = 0;
            if (_current.Length == 0) return Read(buffer, offset, count);
        }
        var n = Math.Min(count, _current.Length - _offset);
        Array.Copy(_current, _offset, buffer, offset, n);
        _offset += n;
        return n;
    }

    public override bool CanRead => true;
    public override bool CanSeek => false;
    public override bool CanWrite => false;
    public override long Length => throw new NotSupportedException();
    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
    public override void Flush() { }
    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
    public override void SetLength(long value) => throw new NotSupportedException();
    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
}

public class FramingVectorTests
{
    public static IEnumerable<object[]> Names => Vectors.Names("framing.json");

    private static byte[] Chunk(JsonNode chunk)
    {
        if (chunk is JsonValue) return System.Text.Encoding.UTF8.GetBytes((string)chunk!);
        if (chunk["hex"] is { } hex) return Convert.FromHexString((string)hex!);
        return System.Text.Encoding.UTF8.GetBytes(string.Concat(Enumerable.Repeat((string)chunk["repeat"]!, (int)chunk["times"]!)));
    }

    private static JsonObject AsObject(RpcMessage m)
    {
        var o = new JsonObject { ["jsonrpc"] = "2.0" };
        if (m.Id is { } id) o["id"] = JsonNode.Parse(id.GetRawText());
        if (m.Method != null) o["method"] = m.Method;
        if (m.Params is { } p) o["params"] = JsonNode.Parse(p.GetRawText());
        if (m.Result is { } r) o["result"] = JsonNode.Parse(r.GetRawText());
        if (m.Error is { } e) o["error"] = JsonNode.Parse(e.GetRawText());
        return o;
    }

    [Theory]
    [MemberData(nameof(Names))]
    public async Task DecodesAsTheVectorSays(string name)
    {
        var c = Vectors.Case("framing.json", name);
        var reader = new FrameReader(new ChunkStream(c["chunks"]!.AsArray().Select(x => Chunk(x!))));
        var produced = new List<JsonNode>();
        while (true)
        {
            try
            {
                var m = await reader.NextAsync();
                if (m == null) break;
                produced.Add(new JsonObject { ["message"] = AsObject(m) });
            }
            catch (FramingException e)
            {
                produced.Add(new JsonObject { ["error"] = e.Code });
                break;
            }
        }
        var expected = c["expect"]!.AsArray();
        Assert.True(JsonNode.DeepEquals(expected, new JsonArray([.. produced])),
            $"expected {expected.ToJsonString()}\nproduced {new JsonArray([.. produced.Select(p => p.DeepClone())]).ToJsonString()}");
    }
}

public class CommandMatchVectorTests
{
    public static IEnumerable<object[]> Names => Vectors.Names("command-match.json");

    [Theory]
    [MemberData(nameof(Names))]
    public void MatchesAsTheHostDoes(string name)
    {
        var c = Vectors.Case("command-match.json", name);
        var commands = c["commands"]!.Deserialize(HostSdk.Wire.WireJsonContext.Default.IReadOnlyListCommand)!;
        var (match, index) = HostSdk.Testing.CommandMatcher.Match((string)c["text"]!, commands, (string)c["conversation"]!);
        var expect = c["expect"];
        if (expect == null)
        {
            Assert.Null(match);
            Assert.Equal(-1, index);
            return;
        }
        Assert.NotNull(match);
        Assert.Equal((string)expect["name"]!, match!.Name);
        Assert.Equal((string)expect["word"]!, match.Word);
        Assert.Equal((string)expect["prefix"]!, match.Prefix);
        Assert.Equal((string)expect["args"]!, match.Args);
        Assert.Equal((int)expect["index"]!, index);
    }
}
