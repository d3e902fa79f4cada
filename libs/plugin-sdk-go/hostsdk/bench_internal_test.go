package hostsdk

import (
	"testing"

	"plugin-host.dev/sdk-go/hostsdk/wire"
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
