package hostsdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"plugin-host.dev/sdk-go/hostsdk"
)

// A built plugin that prints to stdout with fmt (the usual mistake): in protocol mode the prints go to
// stderr, and the frames on stdout stay clean (the test host's reader fails the test on any other byte).
func TestABuiltPluginThatPrintsKeepsStdoutClean(t *testing.T) {
	sdk, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/printer\n\ngo 1.23\n\nrequire plugin-host.dev/sdk-go v0.0.0\n\nreplace plugin-host.dev/sdk-go => " + filepath.ToSlash(sdk) + "\n",
		"main.go": `package main

import (
	"fmt"

	"plugin-host.dev/sdk-go/hostsdk"
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
