package pack_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/pack"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// project writes a plugin project the way an author has it: its own module, requiring the SDK.
func project(t *testing.T) string {
	t.Helper()
	sdk, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/echo\n\ngo 1.23\n\nrequire " + wire.ModulePath + " v" + wire.SDKVersion + "\n\nreplace " + wire.ModulePath + " => " + filepath.ToSlash(sdk) + "\n"
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
		machine                           string // the executable's format and machine, as its headers say
	}{
		{"linux", "amd64", "linux", "x64", "go-echo", "elf " + elf.EM_X86_64.String()},
		{"linux", "arm64", "linux", "arm64", "go-echo", "elf " + elf.EM_AARCH64.String()},
		{"windows", "amd64", "windows", "x64", "go-echo.exe", fmt.Sprintf("pe %#x", pe.IMAGE_FILE_MACHINE_AMD64)},
		{"darwin", "arm64", "osx", "arm64", "go-echo", "macho " + macho.CpuArm64.String()},
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
			if got := executableMachine(u.binary); got != tc.machine {
				t.Fatalf("%s is %q, not a %s/%s executable (%s)", tc.exe, got, tc.goos, tc.goarch, tc.machine)
			}
		})
	}
}

// executableMachine names an executable's format and machine from its headers ("elf EM_X86_64").
func executableMachine(binary []byte) string {
	r := bytes.NewReader(binary)
	if f, err := elf.NewFile(r); err == nil {
		return "elf " + f.Machine.String()
	}
	if f, err := pe.NewFile(r); err == nil {
		return fmt.Sprintf("pe %#x", f.Machine)
	}
	if f, err := macho.NewFile(r); err == nil {
		return "macho " + f.Cpu.String()
	}
	return "unknown"
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

// Every refusal carries its packaging code of the catalogue (the same code the other packers report).
func TestPackRefusals(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	write := func(t *testing.T, dir, name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string, o *pack.Options)
		code  string
	}{
		{"an unsupported platform", func(t *testing.T, dir string, o *pack.Options) { o.GOOS = "plan9" }, wire.ErrPackPlatformUnsupported},
		{"no manifest", func(t *testing.T, dir string, o *pack.Options) { os.Remove(filepath.Join(dir, "manifest.json")) }, wire.ErrPackManifestMissing},
		{"a manifest that breaks the schema", func(t *testing.T, dir string, o *pack.Options) {
			write(t, dir, "manifest.json", `{"pluginId":"x"}`)
		}, wire.ErrPackManifestInvalid},
		{"a manifest that is not JSON", func(t *testing.T, dir string, o *pack.Options) {
			write(t, dir, "manifest.json", `{"pluginId": `)
		}, wire.ErrPackManifestInvalid},
		{"an HTTP plugin manifest", func(t *testing.T, dir string, o *pack.Options) {
			write(t, dir, "manifest.json", `{"pluginId":"com.example.web","name":"w","version":"1.0.0","author":"a","protocolVersion":2,"capabilities":1}`)
		}, wire.ErrPackTransportNotStdio},
		{"a main package folder that does not exist", func(t *testing.T, dir string, o *pack.Options) { o.Package = "./cmd/missing" }, wire.ErrPackEntryMissing},
		{"a main package folder without Go files", func(t *testing.T, dir string, o *pack.Options) {
			os.Mkdir(filepath.Join(dir, "empty"), 0o755)
			o.Package = "./empty"
		}, wire.ErrPackEntryMissing},
		{"an include outside the project", func(t *testing.T, dir string, o *pack.Options) { o.Include = []string{"../x"} }, wire.ErrPackIncludeInvalid},
		{"an include that does not exist", func(t *testing.T, dir string, o *pack.Options) { o.Include = []string{"assets/logo.png"} }, wire.ErrPackIncludeInvalid},
		{"no go command", func(t *testing.T, dir string, o *pack.Options) { o.Go = filepath.Join(dir, "no-such-go") }, wire.ErrPackToolMissing},
		{"an import no module provides", func(t *testing.T, dir string, o *pack.Options) {
			write(t, dir, "extra.go", "package main\n\nimport _ \"example.com/nowhere/lib\"\n")
		}, wire.ErrPackDependencyUnresolved},
		{"a compile error", func(t *testing.T, dir string, o *pack.Options) {
			write(t, dir, "extra.go", "package main\n\nfunc broken() int { return \"text\" }\n")
		}, wire.ErrPackBuildFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := project(t)
			o := pack.Options{Dir: dir, GOOS: "linux", GOARCH: "amd64"}
			tc.setup(t, dir, &o)
			r, err := pack.Pack(o)
			if err == nil {
				t.Fatalf("packed %s", r.Archive)
			}
			if code := pack.CodeOf(err); code != tc.code {
				t.Fatalf("code %q, want %s: %v", code, tc.code, err)
			}
		})
	}
}

func TestAnUnwritableOutputIsRefusedAndAnOtherSDKVersionWarned(t *testing.T) {
	dir := project(t)
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["sdkVersion"] = "0.0.1"
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a-file"), []byte("not a folder"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	_, err = pack.Pack(pack.Options{Dir: dir, GOOS: "linux", GOARCH: "amd64", Out: "a-file/out", Log: &log})
	if pack.CodeOf(err) != wire.ErrPackOutputNotWritable {
		t.Fatalf("error %v", err)
	}
	if !strings.Contains(log.String(), "warning "+wire.ErrPackSDKVersionMismatch+":") {
		t.Fatalf("no sdkVersion warning in %q", log.String())
	}
}

func TestTheCodesAreCataloguedAndListedInTheReadme(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `PACK_") {
			listed[strings.Split(line, "`")[1]] = true
		}
	}
	for _, c := range pack.Codes {
		if e, ok := wire.LookupError(c); !ok || e.Family != "PACK" {
			t.Errorf("%s is not a packaging code of the catalogue", c)
		}
		if !listed[c] {
			t.Errorf("README.md does not list %s", c)
		}
		delete(listed, c)
	}
	for c := range listed {
		t.Errorf("README.md lists %s, which the packer does not report", c)
	}
	rendered := (&pack.Error{Code: wire.ErrPackEntryMissing, Detail: "x"}).Render()
	if !strings.HasPrefix(rendered, "error PACK_ENTRY_MISSING: x\n") || !strings.Contains(rendered, "fix: The program the start command runs") {
		t.Fatalf("rendered %q", rendered)
	}
}
