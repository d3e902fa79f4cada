package pack_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"plugin-host.dev/sdk-go/hostsdk/pack"
	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// project writes a plugin project the way an author has it: its own module, requiring the SDK.
func project(t *testing.T) string {
	t.Helper()
	sdk, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/echo\n\ngo 1.23\n\nrequire plugin-host.dev/sdk-go v0.0.0\n\nreplace plugin-host.dev/sdk-go => " + filepath.ToSlash(sdk) + "\n"
	for name, content := range map[string]string{"go.mod": gomod} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"main.go", "manifest.json"} {
		data, err := os.ReadFile(filepath.Join(sdk, "samples", "echo", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type unpacked struct {
	manifest wire.StdioManifest
	files    map[string]*zip.File
	binary   []byte
}

func open(t *testing.T, path string) unpacked {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	u := unpacked{files: map[string]*zip.File{}}
	var names []string
	for _, f := range zr.File {
		u.files[f.Name] = f
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == "manifest.json" {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&u.manifest); err != nil {
				t.Fatal(err)
			}
		} else {
			u.binary = data
		}
	}
	if len(names) != 2 || names[0] > names[1] {
		t.Fatalf("entries %v (want the manifest and the executable, sorted)", names)
	}
	return u
}

// Cross-builds the four targets the host runs plugins on and checks each archive.
func TestCrossPackedArchives(t *testing.T) {
	dir := project(t)
	targets := []struct {
		goos, goarch, platform, arch, exe string
		magic                             []byte
	}{
		{"linux", "amd64", "linux", "x64", "go-echo", []byte("\x7fELF")},
		{"linux", "arm64", "linux", "arm64", "go-echo", []byte("\x7fELF")},
		{"windows", "amd64", "windows", "x64", "go-echo.exe", []byte("MZ")},
		{"darwin", "arm64", "osx", "arm64", "go-echo", []byte{0xcf, 0xfa, 0xed, 0xfe}},
	}
	for _, tc := range targets {
		t.Run(tc.goos+"-"+tc.goarch, func(t *testing.T) {
			r, err := pack.Pack(pack.Options{Dir: dir, GOOS: tc.goos, GOARCH: tc.goarch})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(r.Archive) != "com.example.go-echo-"+tc.goos+"-"+tc.goarch+".zip" {
				t.Fatalf("archive %s", r.Archive)
			}
			u := open(t, r.Archive)
			stdio := u.manifest.Transport.Stdio
			wantCommand := "./" + tc.exe
			if tc.goos == "windows" {
				wantCommand = tc.exe
			}
			if stdio.Command != wantCommand || len(stdio.Args) != 1 || stdio.Args[0] != "--host-stdio" {
				t.Fatalf("transport %+v", stdio)
			}
			sp := u.manifest.SupportedPlatforms
			if len(sp) != 1 || sp[0].Platform != tc.platform || len(sp[0].Architectures) != 1 || sp[0].Architectures[0] != tc.arch {
				t.Fatalf("supportedPlatforms %+v", sp)
			}
			f := u.files[tc.exe]
			if f == nil || f.Mode().Perm() != 0o755 || !f.Modified.Equal(u.files["manifest.json"].Modified) {
				t.Fatalf("executable entry %+v", f)
			}
			if !bytes.HasPrefix(u.binary, tc.magic) {
				t.Fatalf("%s is not a %s/%s executable (starts with % x)", tc.exe, tc.goos, tc.goarch, u.binary[:4])
			}
		})
	}
}

func TestPackingIsReproducible(t *testing.T) {
	dir := project(t)
	sum := func() [32]byte {
		r, err := pack.Pack(pack.Options{Dir: dir, GOOS: "linux", GOARCH: "amd64"})
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(r.Archive)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(data)
	}
	if a, b := sum(), sum(); a != b {
		t.Fatal("two packs of the same project differ")
	}
}

func TestPackRefusals(t *testing.T) {
	dir := project(t)
	if _, err := pack.Pack(pack.Options{Dir: dir, GOOS: "plan9", GOARCH: "amd64"}); err == nil {
		t.Fatal("plan9 was packed")
	}
	if _, err := pack.Pack(pack.Options{Dir: dir, Include: []string{"../x"}}); err == nil {
		t.Fatal("a file outside the project was included")
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"pluginId":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pack.Pack(pack.Options{Dir: dir}); err == nil {
		t.Fatal("an invalid manifest was packed")
	}
}
