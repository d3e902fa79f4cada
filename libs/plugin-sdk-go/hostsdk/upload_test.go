package hostsdk_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/hostsdktest"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// ctx.UploadMedia and ImageFromMedia/FileFromMedia (docs/protocol/v2.md 4.12 to 4.14): the bytes go to the
// test host over the real stdio runtime in the chunks it names; the SDK's own refusals send nothing.

const uploadManifest = `{
  "pluginId": "com.example.goupload", "name": "Go upload", "version": "1.0.0", "author": "Example",
  "protocolVersion": 2, "sdkVersion": "2.0.0",
  "transport": { "type": "stdio-jsonrpc", "stdio": { "command": "./goupload", "args": ["--host-stdio"] } },
  "eventSubscriptions": [{ "eventType": "message.created" }],
  "permissions": ["messages.reply", "media.upload"],
  "commands": [{ "name": "up" }]
}`

// pngBytes is a PNG signature followed by n-8 bytes of a repeating pattern.
func pngBytes(n int) []byte {
	b := bytes.Repeat([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, n/10+1)[:n]
	copy(b, "\x89PNG\r\n\x1a\n")
	return b
}

// uploadRun runs upload in a /up handler on the test host and returns the handler's error.
func uploadRun(t *testing.T, manifest string, opts hostsdktest.Options, upload func(ctx *hostsdk.Context) error) (*hostsdktest.Host, error) {
	t.Helper()
	p := richPlugin(t, manifest)
	var got error
	p.Command("up", func(ctx *hostsdk.Context) error {
		got = upload(ctx)
		return nil
	})
	h := hostsdktest.Start(t, p, opts)
	h.Send(hostsdktest.Message{Text: "/up"})
	return h, got
}

func TestUploadSendsTheBytesInTheHostsChunksAndAnImagePartNamesThem(t *testing.T) {
	data := pngBytes(1234)
	var media *hostsdk.Media
	h, err := uploadRun(t, uploadManifest, hostsdktest.Options{MaxChunkBytes: 500}, func(ctx *hostsdk.Context) error {
		m, err := ctx.UploadMedia(data, "image/png", hostsdk.WithFileName("chart.png"))
		if err != nil {
			return err
		}
		media = m
		_, err = ctx.Reply(hostsdk.Text("chart: "), hostsdk.ImageFromMedia(m.MediaID))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	uploads := h.Uploads()
	if len(uploads) != 1 {
		t.Fatalf("uploads %+v", uploads)
	}
	u := uploads[0]
	if !bytes.Equal(u.Bytes, data) || u.ContentType != "image/png" || u.FileName != "chart.png" || u.MediaID != media.MediaID {
		t.Fatalf("upload %q %q %q, media %+v", u.MediaID, u.ContentType, u.FileName, media)
	}
	if got := u.Chunks; len(got) != 3 || got[0] != 500 || got[1] != 500 || got[2] != 234 {
		t.Fatalf("chunks %v, want 500, 500, 234", got)
	}
	if media.Size != 1234 || media.ContentType != "image/png" || media.ExpiresAt == "" {
		t.Fatalf("media %+v", media)
	}
	replies := h.Replies()
	if len(replies) != 1 || len(replies[0].Parts) != 2 {
		t.Fatalf("replies %+v", replies)
	}
	if img, ok := replies[0].Parts[1].(wire.MessagePartImage); !ok || img.MediaID != media.MediaID || img.URL != "" {
		t.Fatalf("image part %+v", replies[0].Parts[1])
	}
}

func TestUploadRefusalsOfTheSDKSendNothing(t *testing.T) {
	var calls []string
	var mu sync.Mutex
	count := func(method string, _ json.RawMessage) *hostsdktest.RPCError {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(method, "media.") {
			calls = append(calls, method)
		}
		return nil
	}
	cases := []struct {
		name, manifest string
		data           []byte
		code           string
	}{
		{"without the permission", strings.Replace(uploadManifest, `, "media.upload"`, "", 1), pngBytes(100), wire.CodeMessagePermissionDenied},
		{"over the limit", uploadManifest, pngBytes(wire.LimitMaxMediaUploadBytes + 1), wire.CodeMessageMediaTooLarge},
		{"of no bytes", uploadManifest, nil, wire.CodeMessageMediaUploadInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := uploadRun(t, c.manifest, hostsdktest.Options{Refuse: count}, func(ctx *hostsdk.Context) error {
				_, err := ctx.UploadMedia(c.data, "image/png")
				return err
			})
			var me *hostsdk.MessageError
			if !errors.As(err, &me) || me.Code != c.code || me.FromHost {
				t.Fatalf("want the SDK's %s, got %v", c.code, err)
			}
			if len(h.Uploads()) != 0 {
				t.Fatalf("uploads %+v", h.Uploads())
			}
		})
	}
	if len(calls) != 0 {
		t.Fatalf("the host was called: %v", calls)
	}
}

func TestTheTestHostChecksTheTypeAndTheMediaIDsAsTheHostDoes(t *testing.T) {
	jpeg := append([]byte{0xff, 0xd8, 0xff, 0xe0}, make([]byte, 60)...)
	var errs []error
	h, _ := uploadRun(t, uploadManifest, hostsdktest.Options{}, func(ctx *hostsdk.Context) error {
		_, err := ctx.UploadMedia(jpeg, "image/png") // bytes of another type
		errs = append(errs, err)
		_, err = ctx.UploadMedia(pngBytes(64), "image/bmp") // an image type the host does not take
		errs = append(errs, err)
		_, err = ctx.UploadMedia([]byte("not a pdf"), "application/pdf")
		errs = append(errs, err)
		_, err = ctx.Reply(hostsdk.ImageFromMedia("media-0123456789abcdef")) // never uploaded
		errs = append(errs, err)
		csv, err := ctx.UploadMedia([]byte("a,b\n1,2\n"), "text/csv") // no signature to check: taken as declared
		if err != nil {
			return err
		}
		_, err = ctx.Reply(hostsdk.ImageFromMedia(csv.MediaID)) // an image of bytes that are no image
		errs = append(errs, err)
		return nil
	})
	want := []string{wire.CodeMessageMediaTypeMismatch, wire.CodeMessageMediaTypeMismatch, wire.CodeMessageMediaTypeMismatch, wire.CodeMessageMediaUnknown, wire.CodeMessageMediaTypeMismatch}
	if len(errs) != len(want) {
		t.Fatalf("errors %v", errs)
	}
	for i, code := range want {
		var me *hostsdk.MessageError
		if !errors.As(errs[i], &me) || me.Code != code || !me.FromHost {
			t.Fatalf("check %d: want the host's %s, got %v", i, code, errs[i])
		}
	}
	if u := h.Uploads(); len(u) != 1 || u[0].ContentType != "text/csv" || h.Upload(u[0].MediaID) == nil {
		t.Fatalf("uploads %+v", u)
	}
	if len(h.Replies()) != 0 {
		t.Fatalf("refused messages were recorded: %+v", h.Replies())
	}
}

func TestARefusalOfTheHostStopsTheUploadWithItsCode(t *testing.T) {
	var chunks int
	refuse := func(method string, _ json.RawMessage) *hostsdktest.RPCError {
		if method != wire.MethodMediaChunk {
			return nil
		}
		chunks++
		if chunks < 2 {
			return nil
		}
		return &hostsdktest.RPCError{Code: wire.RPCMessageRejected, Message: "the media store is full", Data: json.RawMessage(`{"code":"message.media.store_full"}`)}
	}
	h, err := uploadRun(t, uploadManifest, hostsdktest.Options{MaxChunkBytes: 100, Refuse: refuse}, func(ctx *hostsdk.Context) error {
		_, err := ctx.UploadMedia(pngBytes(1000), "image/png")
		return err
	})
	var me *hostsdk.MessageError
	if !errors.As(err, &me) || me.Code != wire.CodeMessageMediaStoreFull || !me.FromHost {
		t.Fatalf("want the host's store_full, got %v", err)
	}
	if chunks != 2 || len(h.Uploads()) != 0 {
		t.Fatalf("%d chunks sent after a refusal, uploads %+v", chunks, h.Uploads())
	}
}

func TestUploadOverHTTPIsUnavailable(t *testing.T) {
	// signedClient posts as the host of com.example.goecho.
	p := richPlugin(t, strings.Replace(uploadManifest, "com.example.goupload", "com.example.goecho", 1))
	var got error
	p.OnMessage(func(ctx *hostsdk.Context) error {
		_, got = ctx.UploadMedia(pngBytes(100), "image/png")
		return nil
	})
	h, err := p.HTTPHandler(hostsdk.HTTPOptions{Secret: hostsdk.StaticSecret(secret), Log: func(hostsdk.LogLevel, string, map[string]any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	c := &signedClient{t: t, h: h, now: time.Now()}
	rec, _ := c.post(eventBody(t, "hello", nil), nil)
	if rec.Code != 200 {
		t.Fatalf("status %d %s", rec.Code, rec.Body.String())
	}
	var se *hostsdk.SDKError
	if !errors.As(got, &se) || se.Code != wire.ErrSDKUploadUnavailable {
		t.Fatalf("want SDK_UPLOAD_UNAVAILABLE, got %v", got)
	}
}
