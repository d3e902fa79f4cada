package hostsdk

import (
	"encoding/json"
	"errors"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// An image or file part names its bytes by url or by mediaId, exactly one (docs/protocol/v2.md 7.1), in the
// parts a plugin builds and in the documents it parses; QQ Bot's body names an uploaded image's id (7.3).

const testMediaID = "media-0123456789abcdef"

func partCode(err error) string {
	var me *MessageError
	if errors.As(err, &me) {
		return me.Code
	}
	return ""
}

func renderParts(parts []Part, target wire.Target) (map[string]any, error) {
	normalized, keyboard, err := normalize("text", parts, &target)
	if err != nil {
		return nil, err
	}
	return renderQQBot("text", normalized, keyboard, target)
}

func TestBuiltMediaPartsNeedExactlyOneSource(t *testing.T) {
	group := wire.Target{Type: "group", ID: "G1"}
	bad := []Part{
		wire.MessagePartImage{Type: "image"},
		wire.MessagePartImage{Type: "image", URL: "https://cdn.example.com/a.png", MediaID: testMediaID},
		ImageFromMedia("../../etc/passwd"),
		wire.MessagePartFile{Type: "file", URL: "https://cdn.example.com/a.pdf", MediaID: testMediaID},
	}
	for i, part := range bad {
		if _, err := renderParts([]Part{part}, group); partCode(err) != wire.CodeMessagePartUnsupported {
			t.Fatalf("part %d: want message.part.unsupported, got %v", i, err)
		}
	}
	body, err := renderParts([]Part{Text("chart: "), ImageFromMedia(testMediaID)}, group)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(body)
	if string(got) != `{"content":"chart: ","media":{"file_type":1,"media_id":"media-0123456789abcdef"},"msg_type":7}` {
		t.Fatalf("body %s", got)
	}
	if _, err := renderParts([]Part{ImageFromMedia(testMediaID)}, wire.Target{Type: "channel", ID: "C1"}); partCode(err) != wire.CodeMessagePartUnsupportedTarget {
		t.Fatalf("an uploaded image to a channel: %v", err)
	}
	if f := FileFromMedia(testMediaID); f.MediaID != testMediaID || f.URL != "" || f.Type != "file" {
		t.Fatalf("FileFromMedia %+v", f)
	}
}

func TestParsedMediaPartsNeedExactlyOneSource(t *testing.T) {
	parse := func(part string) ([]Part, error) {
		var v any
		if err := json.Unmarshal([]byte(`{"parts":[`+part+`]}`), &v); err != nil {
			t.Fatal(err)
		}
		_, parts, err := parseOutgoing(v)
		return parts, err
	}
	parts, err := parse(`{"type":"file","mediaId":"` + testMediaID + `","fileName":"a.csv"}`)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := parts[0].(wire.MessagePartFile); !ok || f.MediaID != testMediaID || f.URL != "" || f.FileName != "a.csv" {
		t.Fatalf("parsed %+v", parts)
	}
	for _, doc := range []string{
		`{"type":"image"}`,
		`{"type":"image","url":"https://a.example/x.png","mediaId":"` + testMediaID + `"}`,
		`{"type":"file","mediaId":"short"}`,
		`{"type":"image","mediaId":7}`,
	} {
		if _, err := parse(doc); partCode(err) != wire.CodeMessagePartUnsupported {
			t.Fatalf("%s: want message.part.unsupported, got %v", doc, err)
		}
	}
}
