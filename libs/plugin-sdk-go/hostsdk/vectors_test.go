package hostsdk

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The shared protocol vectors (libs/protocol/vectors, format in its README), read the way every SDK reads
// them: every kind is run, here or in hostsdktest (a kind not listed fails the suite).
var vectorKinds = map[string]string{
	"framing":            "run: through the stdio frame reader (TestFramingVectors)",
	"command-match":      "run: through the test host's matcher (hostsdktest TestCommandMatchVectors)",
	"stdio-manifest":     "run: through validateManifest, the check behind Load, ParseManifest and the packer (TestManifestVectors)",
	"http-manifest":      "run: through validateManifest(http), the check of the HTTP handler's manifest (TestManifestVectors)",
	"message-event":      "run: through decodeChecked, the check and decoding of every stdio and HTTP event (TestEnvelopeVectors)",
	"event-ack":          "run: through decodeChecked; the SDK writes ACKs, checked against the same schema (TestEnvelopeVectors)",
	"message-response":   "run: through decodeChecked; the SDK writes HTTP responses (TestEnvelopeVectors)",
	"rpc-method":         "run: through decodeChecked, the check and decoding of every JSON-RPC params and result (TestRPCMethodVectors)",
	"normalization":      "run: through the SDK's local normalisation (TestNormalizationVectors)",
	"rendering":          "run: through the SDK's local normalisation and QQ Bot rendering (TestRenderingVectors)",
	"event-routing":      "skipped on purpose: the host routes events to plugins, an SDK does not",
	"rich-normalization": "run: through the SDK's local normalisation with images, files and keyboards (TestNormalizationVectors)",
	"rich-rendering":     "run: through the SDK's local normalisation and QQ Bot rendering with images, files and keyboards (TestRenderingVectors)",
}

type vectorFile struct {
	path  string
	Kind  string            `json:"kind"`
	Cases []json.RawMessage `json:"cases"`
}

func vectorsDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "..", "protocol", "vectors"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the protocol vectors are not beside the SDK (%v): run the tests in the repository", err)
	}
	return dir
}

func loadVectors(t *testing.T) []vectorFile {
	var files []vectorFile
	err := filepath.WalkDir(vectorsDir(t), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var f vectorFile
		if err := json.Unmarshal(data, &f); err != nil {
			return err
		}
		f.path = path
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestVectorKindsAreAllKnown(t *testing.T) {
	for _, f := range loadVectors(t) {
		if _, ok := vectorKinds[f.Kind]; !ok {
			t.Errorf("%s: kind %q is neither run nor skipped on purpose by the Go SDK", f.path, f.Kind)
		}
	}
}

type chunk struct {
	text   *string
	Hex    string `json:"hex"`
	Repeat string `json:"repeat"`
	Times  int    `json:"times"`
}

func (c *chunk) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		c.text = new(string)
		return json.Unmarshal(b, c.text)
	}
	type plain chunk
	return json.Unmarshal(b, (*plain)(c))
}

func (c chunk) bytes() []byte {
	switch {
	case c.text != nil:
		return []byte(*c.text)
	case c.Hex != "":
		b, _ := hex.DecodeString(c.Hex)
		return b
	default:
		return []byte(strings.Repeat(c.Repeat, c.Times))
	}
}

// chunkReader hands out one chunk per Read, like the reads of a pipe.
type chunkReader struct{ chunks [][]byte }

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.chunks) > 0 && len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	return n, nil
}

func TestFramingVectors(t *testing.T) {
	ran := 0
	for _, f := range loadVectors(t) {
		if f.Kind != "framing" {
			continue
		}
		for _, raw := range f.Cases {
			var c struct {
				Name   string  `json:"name"`
				Chunks []chunk `json:"chunks"`
				Expect []struct {
					Message json.RawMessage `json:"message"`
					Error   string          `json:"error"`
				} `json:"expect"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			ran++
			t.Run(c.Name, func(t *testing.T) {
				in := &chunkReader{}
				for _, ch := range c.Chunks {
					in.chunks = append(in.chunks, ch.bytes())
				}
				reader := newFrameReader(in)
				var got []string
				for {
					msg, err := reader.next()
					if errors.Is(err, io.EOF) {
						break
					}
					var fe *FramingError
					if errors.As(err, &fe) {
						got = append(got, "error "+fe.Code)
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, "message "+canonical(t, reencode(msg)))
				}
				var want []string
				for _, e := range c.Expect {
					if e.Error != "" {
						want = append(want, "error "+e.Error)
					} else {
						want = append(want, "message "+canonical(t, e.Message))
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("got %v\nwant %v", got, want)
				}
			})
		}
	}
	if ran == 0 {
		t.Fatal("no framing vectors ran")
	}
}

// reencode writes a decoded message back as the JSON-RPC object it was.
func reencode(m *rpcMessage) []byte {
	out := map[string]any{"jsonrpc": "2.0"}
	if m.ID != nil {
		out["id"] = m.ID
	}
	if m.Method != "" {
		out["method"] = m.Method
		if m.HasParams {
			out["params"] = json.RawMessage(m.Params)
		}
	} else if m.Error != nil {
		e := map[string]any{"code": m.Error.Code, "message": m.Error.Message}
		if m.Error.Data != nil {
			e["data"] = m.Error.Data
		}
		out["error"] = e
	} else {
		out["result"] = json.RawMessage(m.Result)
	}
	b, _ := json.Marshal(out)
	return b
}

func canonical(t *testing.T, raw []byte) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// messageOutcome is what a message case expects: the normalised message or body, or an error code.
func messageOutcome(value any, err error, key string) map[string]any {
	if err != nil {
		var me *MessageError
		if errors.As(err, &me) {
			return map[string]any{"error": me.Code}
		}
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{key: value}
}

// sameJSON compares two values by their JSON form, as the vectors are JSON.
func sameJSON(t *testing.T, name string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gotBack, wantBack any
	if err := json.Unmarshal(g, &gotBack); err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(want)
	_ = json.Unmarshal(w, &wantBack)
	if !reflect.DeepEqual(gotBack, wantBack) {
		t.Errorf("%s:\n got  %s\n want %s", name, g, w)
	}
}

func casesOf(t *testing.T, kind string) []map[string]any {
	var out []map[string]any
	for _, f := range loadVectors(t) {
		if f.Kind != kind {
			continue
		}
		for _, raw := range f.Cases {
			var c map[string]any
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s vectors", kind)
	}
	return out
}

func normalizeJSON(message any) (any, error) {
	format, parts, err := parseOutgoing(message)
	if err != nil {
		return nil, err
	}
	normalized, keyboard, err := normalize(format, parts, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"format": format, "parts": normalized}
	if keyboard != nil {
		// send: false is the schema's default, which the wire type leaves out; the vectors state it.
		rows := []any{}
		for _, row := range keyboard.Rows {
			buttons := []any{}
			for _, b := range row.Buttons {
				buttons = append(buttons, map[string]any{"id": b.ID, "label": b.Label, "style": b.GetStyle(), "action": b.Action, "data": b.Data, "send": b.Send})
			}
			rows = append(rows, map[string]any{"buttons": buttons})
		}
		out["keyboard"] = map[string]any{"rows": rows}
	}
	return out, nil
}

func TestNormalizationVectors(t *testing.T) {
	for _, c := range append(casesOf(t, "normalization"), casesOf(t, "rich-normalization")...) {
		got, err := normalizeJSON(c["message"])
		sameJSON(t, c["name"].(string), messageOutcome(got, err, "normalized"), c["expect"])
	}
}

func TestRenderingVectors(t *testing.T) {
	for _, c := range append(casesOf(t, "rendering"), casesOf(t, "rich-rendering")...) {
		if c["provider"] != "qqbot" {
			t.Fatalf("%s: provider %v", c["name"], c["provider"])
		}
		var body any
		target, err := parseTarget(c["target"])
		if err == nil {
			var format string
			var parts []Part
			if format, parts, err = parseOutgoing(c["message"]); err == nil {
				var normalized []Part
				var keyboard *wire.Keyboard
				if normalized, keyboard, err = normalize(format, parts, &target); err == nil {
					body, err = renderQQBot(format, normalized, keyboard, target)
				}
			}
		}
		sameJSON(t, c["name"].(string), messageOutcome(body, err, "body"), c["expect"])
	}
}

// contains is the README's rule for `output`: expected objects are contained, arrays match element-wise,
// an expected {} or [] requires an empty one, other values compare exactly.
func outputContains(actual, expected any) bool {
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return false
		}
		if len(e) == 0 {
			return len(a) == 0
		}
		for k, v := range e {
			if av, ok := a[k]; !ok || !outputContains(av, v) {
				return false
			}
		}
		return true
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(e) {
			return false
		}
		for i := range e {
			if !outputContains(a[i], e[i]) {
				return false
			}
		}
		return true
	}
	return sameValue(actual, expected)
}

type pair struct{ Code, Path string }

func sortedPairs(ps []pair) []pair {
	sort.Slice(ps, func(i, j int) bool { return ps[i].Code+"\x00"+ps[i].Path < ps[j].Code+"\x00"+ps[j].Path })
	return ps
}

func TestManifestVectors(t *testing.T) {
	for kind, http := range map[string]bool{"stdio-manifest": false, "http-manifest": true} {
		for _, c := range casesOf(t, kind) {
			name := c["name"].(string)
			t.Run(kind+"/"+name, func(t *testing.T) {
				value, issues := validateManifest(c["input"], http)
				expect := c["expect"].(map[string]any)
				if errs, ok := expect["errors"].([]any); ok {
					var want, got []pair
					for _, e := range errs {
						m := e.(map[string]any)
						want = append(want, pair{m["code"].(string), m["path"].(string)})
					}
					for _, is := range issues {
						got = append(got, pair{is.Code, is.Path})
						if is.Message == "" {
							t.Errorf("issue %+v has no message", is)
						}
					}
					if !reflect.DeepEqual(sortedPairs(got), sortedPairs(want)) {
						t.Fatalf("issues %v\nwant %v", sortedPairs(got), sortedPairs(want))
					}
					return
				}
				if len(issues) > 0 {
					t.Fatalf("a valid manifest was refused: %+v", issues)
				}
				if out, ok := expect["output"]; ok && !outputContains(value, out) {
					b, _ := json.Marshal(value)
					t.Fatalf("output %s does not contain the expected one", b)
				}
			})
		}
	}
}

// checkEnvelope compares a verdict with an envelope case's expect: valid (and output), or refused with
// exactly the expected set of paths.
func checkEnvelope(t *testing.T, c map[string]any, value any, issues []Issue) {
	t.Helper()
	expect := c["expect"].(map[string]any)
	if expect["valid"] == true {
		if len(issues) > 0 {
			t.Fatalf("refused: %+v", issues)
		}
		if out, ok := expect["output"]; ok && !outputContains(value, out) {
			b, _ := json.Marshal(value)
			t.Fatalf("output %s does not contain the expected one", b)
		}
		return
	}
	if len(issues) == 0 {
		t.Fatal("accepted an invalid document")
	}
	if paths, ok := expect["paths"].([]any); ok {
		want, got := map[string]bool{}, map[string]bool{}
		for _, p := range paths {
			want[p.(string)] = true
		}
		for _, is := range issues {
			got[is.Path] = true
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("paths %v, want %v (issues %+v)", got, want, issues)
		}
	}
}

// decodeVector runs a vector's input through decodeChecked into its wire type, as the SDK decodes a host
// request; a valid one comes back as the input with the schema's defaults (which the wire types apply
// through their Get methods), for the expected output.
func decodeVector(t *testing.T, n *node, typ reflect.Type, input any, domain string) (any, []Issue) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	if issues := decodeChecked(raw, n, reflect.New(typ).Interface(), domain); issues != nil {
		return nil, issues
	}
	return n.withDefaults(input), nil
}

func TestEnvelopeVectors(t *testing.T) {
	for _, kind := range []string{"message-event", "event-ack", "message-response"} {
		file := kind + ".schema.json"
		for _, c := range casesOf(t, kind) {
			t.Run(kind+"/"+c["name"].(string), func(t *testing.T) {
				value, issues := decodeVector(t, documentSchema(file), wireTypes[file], c["input"], "event")
				checkEnvelope(t, c, value, issues)
			})
		}
	}
}

func TestRPCMethodVectors(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range casesOf(t, "rpc-method") {
		method, part := c["method"].(string), c["part"].(string)
		covered[method] = true
		t.Run(c["name"].(string), func(t *testing.T) {
			value, issues := decodeVector(t, methodSchema(method, part), wireTypes[method+"/"+part], c["input"], part)
			checkEnvelope(t, c, value, issues)
		})
	}
	for _, m := range wire.Methods {
		if !covered[m.Method] {
			t.Errorf("no rpc-method vector for %s", m.Method)
		}
	}
}
