package hostsdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// A built plugin that prints to stdout with fmt (the usual mistake): in protocol mode the prints go to
// stderr, and the frames on stdout stay clean (the test host's reader fails the test on any other byte).
func TestABuiltPluginThatPrintsKeepsStdoutClean(t *testing.T) {
	sdk, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/printer\n\ngo 1.23\n\nrequire " + wire.ModulePath + " v" + wire.SDKVersion + "\n\nreplace " + wire.ModulePath + " => " + filepath.ToSlash(sdk) + "\n",
		"main.go": `package main

import (
	"fmt"

	"plugin-host.dev/sdk-go/v2/hostsdk"
)

func main() {
	fmt.Println("starting up")
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		fmt.Println("handling", ctx.Args())
		_, err := ctx.Reply(hostsdk.Text(ctx.Args()))
		return err
	})
	plugin.Run()
}
`,
	}
	manifest, err := os.ReadFile(filepath.Join(sdk, "hostsdk", "testdata", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	files["manifest.json"] = string(manifest)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "printer")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	m, err := hostsdk.ParseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(cwd) }()
	h := StartProcess(t, m, exe, []string{"--host-stdio"}, Options{})
	d := h.Send(Message{Text: "/echo hello"})
	if r := h.RepliesTo(d.Event.EventID); len(r) != 1 || r[0].Text() != "hello" {
		t.Fatalf("replies %+v", r)
	}
	if code := h.Stop("operator"); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// A built plugin uploads bytes over its real stdout in the chunks the test host names and replies with an
// image of them; the test host keeps the bytes it checked.
func TestABuiltPluginUploadsMediaOverStdio(t *testing.T) {
	sdk, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	manifest := `{
  "pluginId": "com.example.goupload", "name": "Go upload", "version": "1.0.0", "author": "Example",
  "protocolVersion": 2, "sdkVersion": "2.0.0",
  "transport": { "type": "stdio-jsonrpc", "stdio": { "command": "./goupload", "args": ["--host-stdio"] } },
  "eventSubscriptions": [{ "eventType": "message.created" }],
  "permissions": ["messages.reply", "media.upload"],
  "commands": [{ "name": "chart" }]
}`
	files := map[string]string{
		"go.mod": "module example.com/goupload\n\ngo 1.23\n\nrequire " + wire.ModulePath + " v" + wire.SDKVersion + "\n\nreplace " + wire.ModulePath + " => " + filepath.ToSlash(sdk) + "\n",
		"main.go": `package main

import (
	"bytes"

	"plugin-host.dev/sdk-go/v2/hostsdk"
)

func main() {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("chart", func(ctx *hostsdk.Context) error {
		png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("chart"), 400)...)
		media, err := ctx.UploadMedia(png, "image/png", hostsdk.WithFileName("chart.png"))
		if err != nil {
			return err
		}
		_, err = ctx.Reply(hostsdk.Text("today: "), hostsdk.ImageFromMedia(media.MediaID))
		return err
	})
	plugin.Run()
}
`,
		"manifest.json": manifest,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "goupload")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", exe, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	m, err := hostsdk.ParseManifest([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(cwd) }()
	h := StartProcess(t, m, exe, []string{"--host-stdio"}, Options{MaxChunkBytes: 512})
	d := h.Send(Message{Text: "/chart"})
	if d.Completion == nil || d.Completion.Error != nil {
		t.Fatalf("completion %+v", d.Completion)
	}
	uploads := h.Uploads()
	if len(uploads) != 1 || len(uploads[0].Bytes) != 2008 || uploads[0].FileName != "chart.png" || len(uploads[0].Chunks) != 4 {
		t.Fatalf("uploads %+v", uploads)
	}
	replies := h.RepliesTo(d.Event.EventID)
	if len(replies) != 1 || len(replies[0].Parts) != 2 {
		t.Fatalf("replies %+v", replies)
	}
	if img, ok := replies[0].Parts[1].(wire.MessagePartImage); !ok || img.MediaID != uploads[0].MediaID {
		t.Fatalf("image %+v", replies[0].Parts[1])
	}
	if code := h.Stop("operator"); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
