// Package pack builds a Go plugin for one platform and writes its installable package:
// artifacts/<pluginId>-<goos>-<goarch>.zip with manifest.json (rewritten to launch the executable and to
// list only that platform) and the executable at mode 0755, byte for byte the same on every run.
package pack

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
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
		return nil, fail(wire.ErrPackPlatformUnsupported, "cannot package for %s/%s", o.GOOS, o.GOARCH)
	}
	manifestPath := filepath.Join(o.Dir, "manifest.json")
	raw, err := os.ReadFile(manifestPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fail(wire.ErrPackManifestMissing, "%s does not exist", manifestPath)
	} else if err != nil {
		return nil, fail(wire.ErrPackManifestInvalid, "cannot read %s: %v", manifestPath, err)
	}
	if httpManifest(raw) {
		return nil, fail(wire.ErrPackTransportNotStdio, "manifest.json has no stdio transport (it is an HTTP plugin manifest)")
	}
	manifest, err := hostsdk.ParseManifest(raw)
	if err != nil {
		e := fail(wire.ErrPackManifestInvalid, "manifest.json does not follow protocol v2")
		var sdkErr *hostsdk.SDKError
		if errors.As(err, &sdkErr) && len(sdkErr.Issues) > 0 {
			for _, is := range sdkErr.Issues {
				e.Details = append(e.Details, fmt.Sprintf("%s at %q: %s", is.Code, is.Path, is.Message))
			}
		} else {
			e.Details = []string{err.Error()}
		}
		return nil, e
	}
	if manifest.SDKVersion != hostsdk.SDKVersion {
		logf("warning %s: manifest.json has sdkVersion %s but the packed SDK is %s", wire.ErrPackSDKVersionMismatch, manifest.SDKVersion, hostsdk.SDKVersion)
	}
	if err := checkMainPackage(filepath.Join(o.Dir, o.Package)); err != nil {
		return nil, err
	}
	for _, inc := range o.Include {
		clean := filepath.ToSlash(filepath.Clean(inc))
		if inc == "" || filepath.IsAbs(inc) || strings.HasPrefix(clean, "../") || clean == ".." || clean == "." {
			return nil, fail(wire.ErrPackIncludeInvalid, "include %q must be a path inside the project", inc)
		}
		if info, err := os.Stat(filepath.Join(o.Dir, inc)); err != nil || !info.Mode().IsRegular() {
			return nil, fail(wire.ErrPackIncludeInvalid, "include %q is not a file of the project", inc)
		}
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
		return nil, fail(wire.ErrPackOutputNotWritable, "cannot create a build folder: %v", err)
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
		return nil, buildError(cmd.Path, err, stderr.String())
	}
	packaged, err := rewriteManifest(raw, command, platform, arch)
	if err != nil {
		return nil, err
	}
	files := map[string]File{"manifest.json": {Data: packaged, Mode: 0o644}}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, fail(wire.ErrPackBuildFailed, "go build wrote no executable: %v", err)
	}
	files[exe] = File{Data: bin, Mode: 0o755}
	for _, inc := range o.Include {
		clean := filepath.ToSlash(filepath.Clean(inc))
		if _, taken := files[clean]; taken {
			return nil, fail(wire.ErrPackIncludeInvalid, "include %q would replace a packaged file", inc)
		}
		data, err := os.ReadFile(filepath.Join(o.Dir, inc))
		if err != nil {
			return nil, fail(wire.ErrPackIncludeInvalid, "include %q: %v", inc, err)
		}
		files[clean] = File{Data: data, Mode: 0o644}
	}
	archive := filepath.Join(o.Dir, o.Out, fmt.Sprintf("%s-%s-%s.zip", manifest.PluginID, o.GOOS, o.GOARCH))
	if err := WriteZip(archive, files); err != nil {
		return nil, fail(wire.ErrPackOutputNotWritable, "cannot write %s: %v", archive, err)
	}
	logf("wrote %s", archive)
	return &Result{Archive: archive, Executable: exe, Manifest: packaged}, nil
}

// httpManifest is true for an HTTP plugin manifest (capabilities and no transport) or a transport other
// than stdio: such a plugin is registered by its URL, not packed.
func httpManifest(raw []byte) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &doc) != nil {
		return false
	}
	transport, ok := doc["transport"]
	if !ok {
		_, capabilities := doc["capabilities"]
		return capabilities
	}
	var t struct {
		Type *string `json:"type"`
	}
	return json.Unmarshal(transport, &t) == nil && t.Type != nil && *t.Type != wire.StdioTransport
}

// checkMainPackage refuses a main package folder without Go files before the compiler runs.
func checkMainPackage(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fail(wire.ErrPackEntryMissing, "the main package %s is not a folder of the project", dir)
	}
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return nil
		}
	}
	return fail(wire.ErrPackEntryMissing, "the main package %s has no Go files", dir)
}

// unresolved are what the go command prints when a module or package of an import cannot be found.
var unresolved = []string{
	"no required module provides package",
	"cannot find module providing package",
	"missing go.sum entry",
	"module lookup disabled",
	"reading go.mod:",
	"replacement directory",
	"cannot find module",
	"package not in std",
	"is not in std",
	"no matching versions",
	"unknown revision",
}

// buildError sorts a failed go build: no go command, an import that does not resolve, or a compile error.
func buildError(goCmd string, err error, output string) error {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		// The go command did not start at all (not found, not executable).
		return fail(wire.ErrPackToolMissing, "cannot run %s: %v", goCmd, err)
	}
	lines := strings.Split(strings.TrimSpace(output), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	code := wire.ErrPackBuildFailed
	for _, marker := range unresolved {
		if strings.Contains(output, marker) {
			code = wire.ErrPackDependencyUnresolved
			break
		}
	}
	return &Error{Code: code, Detail: fmt.Sprintf("go build failed (%v)", err), Details: lines}
}

// rewriteManifest makes the packaged manifest launch the executable (never `go run`) and list only the
// target platform and architecture.
func rewriteManifest(raw []byte, command, platform, arch string) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")), &doc); err != nil {
		return nil, fail(wire.ErrPackManifestInvalid, "manifest.json is not JSON: %v", err)
	}
	transport, _ := doc["transport"].(map[string]any)
	stdio, _ := transport["stdio"].(map[string]any)
	if stdio == nil {
		return nil, fail(wire.ErrPackManifestInvalid, "manifest.json has no transport.stdio")
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
		return nil, fail(wire.ErrPackManifestInvalid, "the packaged manifest is invalid: %v", err)
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
