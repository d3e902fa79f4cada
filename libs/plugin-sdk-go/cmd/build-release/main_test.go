package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/hostsdk"
)

// The release archive, tried as a new user would: unzip it and follow its README to a packed plugin.
func TestReleaseArchiveIsReproducibleAndPacksItsSample(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	work := t.TempDir()
	first, err := Build(root, filepath.Join(work, "one"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := Build(root, filepath.Join(work, "two"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) || filepath.Base(first) != "SDK-V2-Go-"+hostsdk.SDKVersion+".zip" {
		t.Fatalf("%s: two builds differ or the name is wrong", first)
	}
	zr, err := zip.OpenReader(first)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := filepath.Join(work, "unzipped")
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "_test.go") && !strings.Contains(f.Name, "/samples/") {
			t.Errorf("%s: the SDK's own tests are not released", f.Name)
		}
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		path := filepath.Join(out, filepath.FromSlash(f.Name))
		_ = os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sdk := filepath.Join(out, "SDK-V2-Go-"+hostsdk.SDKVersion)
	for _, want := range []string{"README.md", "go.mod", "hostsdk/stdio.go", "hostsdk/wire/types.go", "cmd/host-pack/main.go", "samples/echo/main.go", "schema/manifest.schema.json"} {
		if _, err := os.Stat(filepath.Join(sdk, want)); err != nil {
			t.Errorf("missing %s", want)
		}
	}
	// The README's packing step, run in the unzipped archive.
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "run", "./cmd/host-pack", "-dir", "samples/echo")
	cmd.Dir = sdk
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("packing the sample failed: %v\n%s", err, msg)
	}
	zips, _ := filepath.Glob(filepath.Join(sdk, "samples", "echo", "artifacts", "com.example.go-echo-*.zip"))
	if len(zips) != 1 {
		t.Fatalf("archives %v", zips)
	}
}
