package hostsdktest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The test host's answers to media.upload, media.chunk and media.finish, driven frame by frame by a test
// that plays the plugin: the refusals a plugin not built on the SDK (or a broken one) meets, as the host
// answers them (docs/protocol/v2.md 4.12).

type wirePlugin struct {
	t      *testing.T
	out    io.WriteCloser // what the plugin writes: the host reads it
	frames *reader        // what the host writes to the plugin
	h      *Host
	next   int
}

func startWirePlugin(t *testing.T, permissions []string, opts Options) *wirePlugin {
	toPlugin, hostOut := io.Pipe()
	fromPlugin, pluginOut := io.Pipe()
	p := &wirePlugin{t: t, out: pluginOut, frames: newReader(toPlugin)}
	manifest := &wire.StdioManifest{PluginID: "com.example.wire", Permissions: permissions}
	ready := make(chan struct{})
	go func() {
		defer close(ready)
		f, err := p.frames.next()
		if err != nil || f.Method != wire.MethodHostInitialize {
			t.Errorf("handshake: %v %+v", err, f)
			return
		}
		p.write(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": map[string]any{"protocolVersion": 2}})
	}()
	exited := make(chan int, 1)
	p.h = start(t, manifest, "com.example.wire", hostOut, fromPlugin, exited, opts)
	// Registered after start's cleanup, so it runs first: the plugin is gone when the host closes.
	t.Cleanup(func() { pluginOut.Close(); exited <- 0 })
	<-ready
	return p
}

func (p *wirePlugin) write(message any) {
	body, _ := json.Marshal(message)
	_, _ = p.out.Write([]byte("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body)))
}

// call sends a plugin-to-host request with the host's token and returns the host's answer.
func (p *wirePlugin) call(method string, params map[string]any) *frame {
	p.t.Helper()
	p.next++
	params["token"] = p.h.Token()
	p.write(map[string]any{"jsonrpc": "2.0", "id": p.next, "method": method, "params": params})
	f, err := p.frames.next()
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	return f
}

func refusedWith(t *testing.T, f *frame, rpcCode int, code string) {
	t.Helper()
	var data struct {
		Code string `json:"code"`
	}
	if f.Error != nil {
		_ = json.Unmarshal(f.Error.Data, &data)
	}
	if f.Error == nil || f.Error.Code != rpcCode || data.Code != code {
		t.Fatalf("want %d %s, got %s %+v", rpcCode, code, f.Result, f.Error)
	}
}

func (p *wirePlugin) begin(contentType string, size int) string {
	p.t.Helper()
	f := p.call(wire.MethodMediaUpload, map[string]any{"contentType": contentType, "size": size})
	var r wire.MediaUploadResult
	if f.Error != nil || json.Unmarshal(f.Result, &r) != nil || r.UploadID == "" {
		p.t.Fatalf("media.upload: %s %+v", f.Result, f.Error)
	}
	return r.UploadID
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestTheTestHostAnswersUploadsAsTheHostDoes(t *testing.T) {
	p := startWirePlugin(t, []string{"media.upload"}, Options{MaxChunkBytes: 4})

	// In order, at most 4 bytes a chunk, then the type check on finish.
	id := p.begin("application/pdf", 7)
	if f := p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("%PDF")}); f.Error != nil || string(f.Result) != `{"received":4}` {
		t.Fatalf("chunk: %s %+v", f.Result, f.Error)
	}
	p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 4, "data": b64("-1.")})
	f := p.call(wire.MethodMediaFinish, map[string]any{"uploadId": id})
	var done wire.MediaFinishResult
	if f.Error != nil || json.Unmarshal(f.Result, &done) != nil || done.Size != 7 || done.ContentType != "application/pdf" {
		t.Fatalf("finish: %s %+v", f.Result, f.Error)
	}
	if u := p.h.Upload(done.MediaID); u == nil || string(u.Bytes) != "%PDF-1." {
		t.Fatalf("kept %+v", u)
	}

	// A chunk at the wrong offset is refused and drops the upload.
	id = p.begin("text/plain", 8)
	refusedWith(t, p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 4, "data": b64("abcd")}), wire.RPCMessageRejected, wire.CodeMessageMediaUploadInvalid)
	refusedWith(t, p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("abcd")}), wire.RPCMessageRejected, wire.CodeMessageMediaUnknown)

	// A chunk over maxChunkBytes, chunks past the declared size, data that is not base64.
	id = p.begin("text/plain", 8)
	refusedWith(t, p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("abcde")}), wire.RPCMessageRejected, wire.CodeMessageMediaTooLarge)
	id = p.begin("text/plain", 3)
	refusedWith(t, p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("abcd")}), wire.RPCMessageRejected, wire.CodeMessageMediaTooLarge)
	id = p.begin("text/plain", 3)
	refusedWith(t, p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": "a%b"}), wire.RPCMessageRejected, wire.CodeMessageMediaUploadInvalid)

	// media.finish before the declared size; a declared size over the limit; bytes that are not the type.
	id = p.begin("text/plain", 8)
	p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("abcd")})
	refusedWith(t, p.call(wire.MethodMediaFinish, map[string]any{"uploadId": id}), wire.RPCMessageRejected, wire.CodeMessageMediaUploadInvalid)
	refusedWith(t, p.call(wire.MethodMediaUpload, map[string]any{"contentType": "text/plain", "size": wire.LimitMaxMediaUploadBytes + 1}), wire.RPCMessageRejected, wire.CodeMessageMediaTooLarge)
	id = p.begin("image/gif", 4)
	p.call(wire.MethodMediaChunk, map[string]any{"uploadId": id, "offset": 0, "data": b64("GIF8")})
	refusedWith(t, p.call(wire.MethodMediaFinish, map[string]any{"uploadId": id}), wire.RPCMessageRejected, wire.CodeMessageMediaTypeMismatch)

	// Params the schema refuses.
	if f := p.call(wire.MethodMediaUpload, map[string]any{"contentType": "Image/PNG", "size": 4}); f.Error == nil || f.Error.Code != wire.RPCInvalidParams {
		t.Fatalf("an invalid content type: %+v", f.Error)
	}
	if got := p.h.Uploads(); len(got) != 1 {
		t.Fatalf("uploads %+v", got)
	}
}

func TestTheTestHostRefusesUploadsWithoutThePermission(t *testing.T) {
	p := startWirePlugin(t, []string{"messages.reply"}, Options{})
	refusedWith(t, p.call(wire.MethodMediaUpload, map[string]any{"contentType": "text/plain", "size": 3}), wire.RPCPermissionDenied, wire.CodeMessagePermissionDenied)
}
