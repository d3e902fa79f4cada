package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk"
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
	proxied := "goproxy/" + proxyDir
	for _, want := range []string{"README.md", "go.mod", "hostsdk/stdio.go", "hostsdk/wire/types.go", "cmd/host-pack/main.go", "samples/echo/main.go", "schema/manifest.schema.json", proxied + "list", proxied + ModuleVersion + ".zip"} {
		if _, err := os.Stat(filepath.Join(sdk, want)); err != nil {
			t.Errorf("missing %s", want)
		}
	}
	// The README's steps for the archive, typed as written: the sample's test and package, then a project
	// of one's own beside the unzipped folder.
	readme, _ := os.ReadFile(filepath.Join(sdk, "README.md"))
	steps := archiveSteps(t, string(readme))
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", steps)
	cmd.Dir = out
	gobin := filepath.Join(runtime.GOROOT(), "bin")
	// A module cache of its own: the shared one may hold this version from an older build of the SDK.
	cmd.Env = append(os.Environ(), "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod -modcacherw", "GOMODCACHE="+filepath.Join(work, "modcache"))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's steps failed: %v\n%s\n%s", err, steps, msg)
	}
	for _, pattern := range []string{
		filepath.Join(sdk, "samples", "echo", "artifacts", "com.example.go-echo-*.zip"),
		filepath.Join(out, "my-plugin", "artifacts", "com.example.go-echo-*.zip"),
	} {
		if zips, _ := filepath.Glob(pattern); len(zips) != 1 {
			t.Errorf("%s: archives %v", pattern, zips)
		}
	}
	// Every link of the README leads to a file of the archive or to a web page.
	for _, m := range regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(readme), -1) {
		target := strings.SplitN(m[1], "#", 2)[0]
		if target == "" || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "http://") {
			continue
		}
		if _, err := os.Stat(filepath.Join(sdk, filepath.FromSlash(target))); err != nil {
			t.Errorf("the README links to %s, which the archive lacks", m[1])
		}
	}
}

// The module proxy folder, used as a new project would: an empty folder, GOPROXY=file://, go get, go build.
func TestProxyFolderServesTheModuleToAnEmptyProject(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	work := t.TempDir()
	first, err := Proxy(root)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := Proxy(root)
	dir := proxyDir
	major := strings.SplitN(hostsdk.SDKVersion, ".", 2)[0]
	if dir != ModulePath+"/@v/" || !strings.HasSuffix(ModulePath, "/v"+major) || ModuleVersion != "v"+hostsdk.SDKVersion {
		t.Fatalf("the folder serves %s%s", dir, ModuleVersion)
	}
	if len(first) != 4 || len(second) != 4 {
		t.Fatalf("files: %d and %d", len(first), len(second))
	}
	for name, data := range first {
		if !bytes.Equal(data, second[name]) {
			t.Errorf("%s: two builds differ", name)
		}
	}
	if got := string(first[dir+"list"]); got != ModuleVersion+"\n" {
		t.Errorf("list: %q", got)
	}
	goMod, _ := os.ReadFile(filepath.Join(root, "go.mod"))
	if !bytes.Equal(first[dir+ModuleVersion+".mod"], goMod) {
		t.Errorf(".mod differs from go.mod")
	}
	var info struct{ Version string }
	if err := json.Unmarshal(first[dir+ModuleVersion+".info"], &info); err != nil || info.Version != ModuleVersion {
		t.Errorf(".info: %s (%v)", first[dir+ModuleVersion+".info"], err)
	}
	zr, err := zip.NewReader(bytes.NewReader(first[dir+ModuleVersion+".zip"]), int64(len(first[dir+ModuleVersion+".zip"])))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range zr.File {
		names[f.Name] = true
		if !strings.HasPrefix(f.Name, ModulePath+"@"+ModuleVersion+"/") || strings.HasSuffix(f.Name, "/") {
			t.Errorf("%s: not a file of the module's folder", f.Name)
		}
		if strings.HasSuffix(f.Name, "_test.go") || strings.Contains(f.Name, "/testdata/") {
			t.Errorf("%s: the SDK's own tests are not released", f.Name)
		}
	}
	for _, want := range []string{"go.mod", "hostsdk/plugin.go", "hostsdk/hostsdktest/host.go", "cmd/host-pack/main.go"} {
		if !names[ModulePath+"@"+ModuleVersion+"/"+want] {
			t.Errorf("the module zip lacks %s", want)
		}
	}

	proxy := filepath.Join(work, "proxy")
	if err := WriteProxy(root, proxy); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(work, "tiny")
	_ = os.MkdirAll(project, 0o755)
	main := "package main\n\nimport (\n\t\"os\"\n\n\t\"" + ModulePath + "/hostsdk\"\n)\n\nfunc main() { os.Stdout.WriteString(hostsdk.SDKVersion) }\n"
	if err := os.WriteFile(filepath.Join(project, "main.go"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin")
	env := append(os.Environ(), "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOTOOLCHAIN=local",
		"GOPROXY=file://"+filepath.ToSlash(proxy), "GONOSUMDB=plugin-host.dev", "GOFLAGS=-mod=mod -modcacherw", "GOMODCACHE="+filepath.Join(work, "modcache"))
	for _, step := range [][]string{{"mod", "init", "example.com/tiny"}, {"get", ModulePath + "@" + ModuleVersion}, {"build", "-o", "tiny", "."}} {
		cmd := exec.Command("go", step...)
		cmd.Dir, cmd.Env = project, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(step, " "), err, out)
		}
	}
	mod, _ := os.ReadFile(filepath.Join(project, "go.mod"))
	if !strings.Contains(string(mod), "require "+ModulePath+" "+ModuleVersion) || strings.Contains(string(mod), "replace") {
		t.Errorf("go.mod:\n%s", mod)
	}
	if sum, _ := os.ReadFile(filepath.Join(project, "go.sum")); !strings.Contains(string(sum), ModulePath+" "+ModuleVersion+" h1:") {
		t.Errorf("go.sum lacks the module's hash:\n%s", sum)
	}
	out, err := exec.Command(filepath.Join(project, "tiny")).Output()
	if err != nil || string(out) != hostsdk.SDKVersion {
		t.Errorf("the built program printed %q (%v)", out, err)
	}
}

// archiveSteps returns the shell blocks of the README's section "From the release archive", in order.
func archiveSteps(t *testing.T, readme string) string {
	start := strings.Index(readme, "\n## From the release archive\n")
	if start < 0 {
		t.Fatal(`the README has no section "From the release archive"`)
	}
	section := readme[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var steps []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		steps = append(steps, m[1])
	}
	if len(steps) < 2 {
		t.Fatalf("the section has %d shell blocks", len(steps))
	}
	return strings.Join(steps, "\n")
}

func TestEscapeModulePathWritesCapitalsAsTheProxyProtocolAsks(t *testing.T) {
	if got := escapeModulePath("github.com/Azure/SDK/v2"); got != "github.com/!azure/!s!d!k/v2" {
		t.Fatalf("got %s", got)
	}
}

func TestUnlinkRepositoryNamesTheFileInsteadOfLinkingOutsideTheArchive(t *testing.T) {
	got := string(UnlinkRepository([]byte("as [http-signing.md](../../docs/protocol/http-signing.md#headers) says; [types](hostsdk/wire/types.go); [docs/protocol/v2.md](../../docs/protocol/v2.md)")))
	want := "as http-signing.md (`docs/protocol/http-signing.md` in the host's repository) says; [types](hostsdk/wire/types.go); `docs/protocol/v2.md` in the host's repository"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
