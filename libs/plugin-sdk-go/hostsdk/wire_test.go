package hostsdk_test

import (
	"encoding/json"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

func TestGeneratedFilesAreGofmtClean(t *testing.T) {
	files, _ := filepath.Glob("wire/*.go")
	if len(files) == 0 {
		t.Fatal("no generated files")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		formatted, err := format.Source(src)
		if err != nil || string(formatted) != string(src) {
			t.Errorf("%s is not gofmt-formatted (%v)", f, err)
		}
	}
}

// go.mod names the module path the generator derives from the SDK version (its major version at the end).
func TestGoModNamesTheGeneratedModulePath(t *testing.T) {
	goMod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(goMod), "\n")
	if first != "module "+wire.ModulePath {
		t.Fatalf("go.mod says %q; wire.ModulePath (SDK %s) is %s: change go.mod and every import to it", first, wire.SDKVersion, wire.ModulePath)
	}
}

func TestMessagePartsRoundTripAndStrictDecoding(t *testing.T) {
	msg := wire.OutgoingMessage{Parts: wire.MessagePartList{
		hostsdk.Text("a"), hostsdk.AtUserID("u1", "Ann"), hostsdk.AtEveryone(), hostsdk.Composite(hostsdk.Literal("[x]")),
	}}
	b, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"parts":[{"type":"text","text":"a"},{"type":"mention","target":"user","id":"u1","displayName":"Ann"},{"type":"mention","target":"everyone"},{"type":"composite","parts":[{"type":"text","text":"[x]","literal":true}]}]}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	var back wire.OutgoingMessage
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if _, ok := back.Parts[3].(wire.MessagePartComposite); !ok || len(back.Parts) != 4 {
		t.Fatalf("decoded %#v", back.Parts)
	}
	// A zero-valued branch still writes its constants.
	if b, _ := json.Marshal(wire.MessagePartText{Text: "z"}); string(b) != `{"type":"text","text":"z"}` {
		t.Fatalf("constants not written: %s", b)
	}
	for _, bad := range []string{`{"type":"sticker"}`, `{"type":"text","text":"x","color":"red"}`, `{"type":"mention","target":"room"}`, `null`, `[]`} {
		if _, err := wire.DecodeMessagePart([]byte(bad)); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestDefaultsOfOptionalFields(t *testing.T) {
	var limits *wire.RuntimeLimits
	if limits.GetMaxConcurrentEvents() != wire.RuntimeDefaultMaxConcurrentEvents || limits.GetQueueCapacity() != wire.RuntimeDefaultQueueCapacity {
		t.Fatal("defaults of a missing runtime object")
	}
	zero := int64(0)
	if (&wire.RuntimeLimits{QueueCapacity: &zero}).GetQueueCapacity() != 0 {
		t.Fatal("an explicit 0 must not become the default")
	}
}
