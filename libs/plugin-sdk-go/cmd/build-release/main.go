// Command build-release writes the Go SDK's release archive SDK-V2-Go-<version>.zip: the module (its
// packages without tests, the packer), its README, the sample plugin, the manifest JSON Schema and the
// module once more as a Go module proxy folder (goproxy/), in one folder, byte-identical on every build.
//
//	go run ./cmd/build-release -out ../../dist
//	go run ./cmd/build-release -proxy ../../dist/go-proxy    (only the module proxy folder)
//
// The proxy folder has the layout the go command reads from GOPROXY=file://<folder> (go.dev/ref/mod,
// "GOPROXY protocol"): <module>/@v/list, and <version>.info, .mod and .zip, so a plugin project requires the
// SDK as a module, offline, without a copy of it and without a replace directive.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk"
	"plugin-host.dev/sdk-go/v2/hostsdk/pack"
	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// ModulePath is the SDK's module path, with its major version suffix (go.mod states the same).
const ModulePath = wire.ModulePath

// ModuleVersion is the module version the proxy folder serves: the SDK version.
const ModuleVersion = "v" + hostsdk.SDKVersion

// proxyDir is the folder of the module's versions inside the proxy folder: the module path escaped as the
// GOPROXY protocol asks (each capital letter as '!' and its lower case), then /@v/.
var proxyDir = escapeModulePath(ModulePath) + "/@v/"

// escapeModulePath escapes a module path for a module proxy's file names (go.dev/ref/mod#goproxy-protocol).
func escapeModulePath(path string) string {
	var b strings.Builder
	for _, r := range path {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Files returns the archive's entries, read from the SDK module at root, under prefix.
func Files(root, prefix string) (map[string]pack.File, error) {
	files, err := ModuleFiles(root, prefix)
	if err != nil {
		return nil, err
	}
	add := func(rel string) error {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		files[prefix+filepath.ToSlash(rel)] = pack.File{Data: data, Mode: 0o644}
		return nil
	}
	err = filepath.WalkDir(filepath.Join(root, "samples", "echo"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "artifacts" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		// The sample keeps its test: it is part of what the sample shows.
		return add(rel)
	})
	if err != nil {
		return nil, err
	}
	schema, err := os.ReadFile(filepath.Join(root, "..", "protocol", "schema", "manifest.schema.json"))
	if err != nil {
		return nil, err
	}
	files[prefix+"schema/manifest.schema.json"] = pack.File{Data: schema, Mode: 0o644}
	proxy, err := Proxy(root)
	if err != nil {
		return nil, err
	}
	for name, data := range proxy {
		files[prefix+"goproxy/"+name] = pack.File{Data: data, Mode: 0o644}
	}
	return files, nil
}

// ModuleFiles returns the module's files as it is released, under prefix: go.mod, the README, the hostsdk
// packages without their tests and test data, and the packer command.
func ModuleFiles(root, prefix string) (map[string]pack.File, error) {
	files := map[string]pack.File{}
	add := func(rel string) error {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		files[prefix+filepath.ToSlash(rel)] = pack.File{Data: data, Mode: 0o644}
		return nil
	}
	if err := add("go.mod"); err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		return nil, err
	}
	files[prefix+"README.md"] = pack.File{Data: UnlinkRepository(readme), Mode: 0o644}
	for _, dir := range []string{"hostsdk", "cmd/host-pack"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if d.IsDir() {
				if d.Name() == "testdata" || d.Name() == "artifacts" {
					return filepath.SkipDir
				}
				return nil
			}
			// The SDK's own tests stay in the repository.
			if strings.HasSuffix(path, "_test.go") {
				return nil
			}
			return add(rel)
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// Proxy returns the files of the module proxy folder, by path inside it: the version list, the version's
// .info, its .mod (go.mod as it is) and its .zip (the module's files under <module>@<version>/).
func Proxy(root string) (map[string][]byte, error) {
	module, err := ModuleFiles(root, ModulePath+"@"+ModuleVersion+"/")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "sdk-go-proxy-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	zipPath := filepath.Join(tmp, "module.zip")
	if err := pack.WriteZip(zipPath, module); err != nil {
		return nil, err
	}
	zipped, err := os.ReadFile(zipPath)
	if err != nil {
		return nil, err
	}
	info, err := json.Marshal(map[string]string{"Version": ModuleVersion, "Time": "1980-01-01T00:00:00Z"})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		proxyDir + "list":                  []byte(ModuleVersion + "\n"),
		proxyDir + ModuleVersion + ".info": append(info, '\n'),
		proxyDir + ModuleVersion + ".mod":  module[ModulePath+"@"+ModuleVersion+"/go.mod"].Data,
		proxyDir + ModuleVersion + ".zip":  zipped,
	}, nil
}

// WriteProxy writes the module proxy folder into out (GOPROXY=file://<out>).
func WriteProxy(root, out string) error {
	files, err := Proxy(root)
	if err != nil {
		return err
	}
	for name, data := range files {
		path := filepath.Join(out, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// repositoryLink is a Markdown link from the SDK's folder (libs/plugin-sdk-go) to a file elsewhere in the
// host's repository, which the archive does not carry.
var repositoryLink = regexp.MustCompile(`\[([^\]]+)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)`)

// UnlinkRepository turns the README's links to files outside the SDK's folder into text naming the file's
// path in the host's repository, so the archive's README has no link that leads nowhere.
func UnlinkRepository(markdown []byte) []byte {
	return repositoryLink.ReplaceAllFunc(markdown, func(link []byte) []byte {
		m := repositoryLink.FindSubmatch(link)
		target := path.Join("libs/plugin-sdk-go", string(m[2]))
		if string(m[1]) == target {
			return []byte(fmt.Sprintf("`%s` in the host's repository", target))
		}
		return []byte(fmt.Sprintf("%s (`%s` in the host's repository)", m[1], target))
	})
}

// Build writes the archive into out and returns its path.
func Build(root, out string) (string, error) {
	name := "SDK-V2-Go-" + hostsdk.SDKVersion
	files, err := Files(root, name+"/")
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, name+".zip")
	return path, pack.WriteZip(path, files)
}

func main() {
	out := flag.String("out", filepath.Join("..", "..", "dist"), "folder of the archive")
	root := flag.String("root", ".", "the SDK module (libs/plugin-sdk-go)")
	proxy := flag.String("proxy", "", "write only the module proxy folder, into this folder")
	flag.Parse()
	if *proxy != "" {
		if err := WriteProxy(*root, *proxy); err != nil {
			fmt.Fprintln(os.Stderr, "build-release:", err)
			os.Exit(1)
		}
		abs, _ := filepath.Abs(*proxy)
		fmt.Printf("GOPROXY=file://%s %s@%s\n", filepath.ToSlash(abs), ModulePath, ModuleVersion)
		return
	}
	path, err := Build(*root, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build-release:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
