// Package pack builds a Go plugin for one platform and writes its installable package:
// artifacts/<pluginId>-<goos>-<goarch>.zip with manifest.json (rewritten to launch the executable and to
// list only that platform) and the executable at mode 0755, byte for byte the same on every run.
package pack

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"plugin-host.dev/sdk-go/hostsdk"
	"plugin-host.dev/sdk-go/hostsdk/wire"
)

// Options of Pack.
type Options struct {
	// Dir is the plugin project (manifest.json and the main package); default ".".
	Dir string
	// Package is the main package to build, relative to Dir; default ".".
	Package string
	// GOOS and GOARCH are the target; default this machine's.
	GOOS, GOARCH string
	// Out is the folder of the archive, relative to Dir; default "artifacts".
	Out string
	// Name is the executable's name (".exe" is added for windows); default the last segment of the pluginId.
	Name string
	// Include lists extra files of Dir to package (relative paths, e.g. "README.md", "assets/logo.png").
	Include []string
	// Go is the go command; default $GO, then "go" on PATH, then this toolchain's own.
	Go string
	// Log receives progress lines; default none.
	Log io.Writer
}

// Result says what Pack wrote.
type Result struct {
	Archive    string
	Executable string
	Manifest   []byte
}

// Platform maps GOOS to the manifest's platform names, and Architecture GOARCH to its architectures.
var (
	Platform     = map[string]string{"linux": "linux", "windows": "windows", "darwin": "osx"}
	Architecture = map[string]string{"amd64": "x64", "arm64": "arm64", "386": "x86"}
)

// fixedTime is the timestamp of every archive entry, so packing twice gives the same bytes.
var fixedTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

func goCommand(o Options) string {
	if o.Go != "" {
		return o.Go
	}
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	if g, err := exec.LookPath("go"); err == nil {
		return g
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// Pack builds and packages the plugin.
func Pack(o Options) (*Result, error) {
	if o.Dir == "" {
		o.Dir = "."
	}
	if o.Package == "" {
		o.Package = "."
	}
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.GOARCH == "" {
		o.GOARCH = runtime.GOARCH
	}
	if o.Out == "" {
		o.Out = "artifacts"
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, format+"\n", args...)
		}
	}
	platform, okOS := Platform[o.GOOS]
	arch, okArch := Architecture[o.GOARCH]
	if !okOS || !okArch {
		return nil, fmt.Errorf("cannot package for %s/%s: the host runs plugins on linux, windows and darwin (osx) with amd64 (x64), arm64 or 386 (x86)", o.GOOS, o.GOARCH)
	}
	raw, err := os.ReadFile(filepath.Join(o.Dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("cannot read manifest.json: %w", err)
	}
	manifest, err := hostsdk.ParseManifest(raw)
	if err != nil {
		return nil, err
	}
	name := o.Name
	if name == "" {
		name = manifest.PluginID[strings.LastIndex(manifest.PluginID, ".")+1:]
	}
	exe, command := name, "./"+name
	if o.GOOS == "windows" {
		exe = name + ".exe"
		command = exe
	}
	build, err := os.MkdirTemp("", "host-pack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(build)
	binary := filepath.Join(build, exe)
	logf("building %s for %s/%s", manifest.PluginID, o.GOOS, o.GOARCH)
	cmd := exec.Command(goCommand(o), "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", binary, o.Package)
	cmd.Dir = o.Dir
	cmd.Env = append(os.Environ(), "GOOS="+o.GOOS, "GOARCH="+o.GOARCH, "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build failed: %v\n%s", err, stderr.String())
	}
	packaged, err := rewriteManifest(raw, command, platform, arch)
	if err != nil {
		return nil, err
	}
	files := map[string]File{"manifest.json": {Data: packaged, Mode: 0o644}}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	files[exe] = File{Data: bin, Mode: 0o755}
	for _, inc := range o.Include {
		clean := filepath.ToSlash(filepath.Clean(inc))
		if filepath.IsAbs(inc) || strings.HasPrefix(clean, "../") || clean == ".." {
			return nil, fmt.Errorf("include %q must be a path inside the project", inc)
		}
		if _, taken := files[clean]; taken {
			return nil, fmt.Errorf("include %q would replace a packaged file", inc)
		}
		data, err := os.ReadFile(filepath.Join(o.Dir, inc))
		if err != nil {
			return nil, fmt.Errorf("include %q: %w", inc, err)
		}
		files[clean] = File{Data: data, Mode: 0o644}
	}
	archive := filepath.Join(o.Dir, o.Out, fmt.Sprintf("%s-%s-%s.zip", manifest.PluginID, o.GOOS, o.GOARCH))
	if err := WriteZip(archive, files); err != nil {
		return nil, err
	}
	logf("wrote %s", archive)
	return &Result{Archive: archive, Executable: exe, Manifest: packaged}, nil
}

// rewriteManifest makes the packaged manifest launch the executable (never `go run`) and list only the
// target platform and architecture.
func rewriteManifest(raw []byte, command, platform, arch string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &doc); err != nil {
		return nil, err
	}
	transport, _ := doc["transport"].(map[string]any)
	stdio, _ := transport["stdio"].(map[string]any)
	if stdio == nil {
		return nil, fmt.Errorf("manifest.json has no transport.stdio")
	}
	args := []any{}
	if list, ok := stdio["args"].([]any); ok && stdio["command"] != "go" {
		args = list
	}
	hasFlag := false
	for _, a := range args {
		hasFlag = hasFlag || a == wire.StdioFlag
	}
	if !hasFlag {
		args = append(args, wire.StdioFlag)
	}
	stdio["command"] = command
	stdio["args"] = args
	stdio["workingDirectory"] = "."
	doc["supportedPlatforms"] = []any{map[string]any{"platform": platform, "architectures": []any{arch}}}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if _, err := hostsdk.ParseManifest(out); err != nil {
		return nil, fmt.Errorf("the packaged manifest is invalid: %w", err)
	}
	return out, nil
}

// File is one archive entry: its bytes and Unix mode.
type File struct {
	Data []byte
	Mode os.FileMode
}

// WriteZip writes the entries sorted by name with fixed timestamps and Unix modes, then renames the
// archive into place: the same files give the same bytes.
func WriteZip(path string, files map[string]File) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		h := &zip.FileHeader{Name: n, Method: zip.Deflate, Modified: fixedTime}
		h.SetMode(files[n].Mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := w.Write(files[n].Data); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
