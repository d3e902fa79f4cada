package hostsdk

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// benchEventFrame is the event of e2e/runtime/bench (sdk-peer.ts), as the host frames it.
const benchEventFrame = `{"jsonrpc":"2.0","id":17,"method":"events.message","params":{"eventId":"e17","eventType":"message.created","timestamp":"2026-01-01T00:00:00.000Z","source":"console","bot":{"botAccountId":"console-bot","platform":"console"},"conversation":{"type":"group","conversationId":"g1"},"sender":{"provider":"console","mentionId":"u1","displayName":"u1"},"message":{"id":"m-e17","content":"/echo <b>hi</b>","attachments":[],"mentions":[]},"messageReference":{"messageId":"m-e17","targetType":"group","targetId":"g1","restrictions":[]},"command":{"name":"echo","word":"echo","prefix":"/","args":"<b>hi</b>"}}}`

func BenchmarkDecodeEvent(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m, err := decodePayload([]byte(benchEventFrame))
		if err != nil {
			b.Fatal(err)
		}
		var ev wire.MessageEvent
		if issues := decodeParams(m, &ev); issues != nil {
			b.Fatal(issues)
		}
	}
}

// BenchmarkStdioExchange runs the exchange of the stdio benchmark (the event, its ACK, a Markdown reply
// and its answer, events.completed and its answer) one event at a time over in-memory pipes; the host
// side reuses its buffers, so the allocations reported are almost all the runtime's.
func BenchmarkStdioExchange(b *testing.B) {
	p := MustLoad("testdata/manifest.json")
	p.Command("echo", func(ctx *Context) error {
		_, err := ctx.ReplyMarkdown(AtUser(ctx.Sender()), Text(" "+ctx.Args()))
		return err
	})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	exited := make(chan int, 1)
	go func() { exited <- p.RunStdio([]string{wire.StdioFlag}, inR, outW, io.Discard) }()
	host := &benchHost{w: inW, r: bufio.NewReader(outR)}
	host.send(`{"jsonrpc":"2.0","id":0,"method":"host.initialize","params":{"supportedProtocolVersions":[2],"instanceId":"i","pluginId":"com.example.goecho","hostVersion":"b","directories":{"pluginDirectory":".","pluginDataDirectory":".","pluginConfigDirectory":".","pluginCacheDirectory":"."},"token":"` + strings.Repeat("t", 40) + `","encoding":"json","runtime":{"maxConcurrentEvents":32,"queueCapacity":64},"settings":{}}}`)
	host.next()
	event := strings.Replace(strings.Replace(benchEventFrame, `"id":17`, `"id":%d`, 1), `e17`, `e%d`, -1)
	exchange := func(i int) {
		host.send(fmt.Sprintf(event, i, i, i, i))
		for done := false; !done; {
			frame := host.next()
			switch {
			case bytes.Contains(frame, []byte(`"method":"messages.reply"`)):
				host.answer(frame, `{"accepted":true,"messageId":"out-1","target":{"type":"group","id":"g1"}}`)
			case bytes.Contains(frame, []byte(`"method":"events.completed"`)):
				host.answer(frame, `{"recorded":true}`)
				done = true
			case bytes.Contains(frame, []byte(`"error"`)):
				b.Fatalf("%s", frame)
			}
		}
	}
	for i := 0; i < 200; i++ {
		exchange(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		exchange(1000 + i)
	}
	b.StopTimer()
	inW.Close()
	<-exited
}

type benchHost struct {
	w   io.Writer
	r   *bufio.Reader
	buf []byte
	out []byte
}

func (h *benchHost) send(body string) {
	h.out = append(strconv.AppendInt(append(h.out[:0], "Content-Length: "...), int64(len(body)), 10), "\r\n\r\n"...)
	h.out = append(h.out, body...)
	_, _ = h.w.Write(h.out)
}

// answer answers the request frame with result.
func (h *benchHost) answer(frame []byte, result string) {
	at := bytes.Index(frame, []byte(`"id":`)) + 5
	end := at + bytes.IndexAny(frame[at:], ",}")
	body := append(append(append(append([]byte(`{"jsonrpc":"2.0","id":`), frame[at:end]...), `,"result":`...), result...), '}')
	h.send(string(body))
}

func (h *benchHost) next() []byte {
	line, _ := h.r.ReadSlice('\n')
	n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(string(line), "Content-Length: ")))
	_, _ = h.r.ReadSlice('\n')
	if cap(h.buf) < n {
		h.buf = make([]byte, n)
	}
	h.buf = h.buf[:n]
	_, _ = io.ReadFull(h.r, h.buf)
	return h.buf
}
