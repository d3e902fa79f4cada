// Command build-release writes the Go SDK's release archive SDK-V2-Go-<version>.zip: the module (its
// packages without tests, the packer), its README, the sample plugin and the manifest JSON Schema, in one
// folder, byte-identical on every build.
//
//	go run ./cmd/build-release -out ../../dist
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"plugin-host.dev/sdk-go/hostsdk"
	"plugin-host.dev/sdk-go/hostsdk/pack"
)

// Files returns the archive's entries, read from the SDK module at root, under prefix.
func Files(root, prefix string) (map[string]pack.File, error) {
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
	for _, dir := range []string{"hostsdk", "cmd/host-pack", "samples/echo"} {
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
			// The sample keeps its files; the SDK's own tests stay in the repository.
			if strings.HasSuffix(path, "_test.go") && !strings.HasPrefix(filepath.ToSlash(rel), "samples/") {
				return nil
			}
			return add(rel)
		})
		if err != nil {
			return nil, err
		}
	}
	schema, err := os.ReadFile(filepath.Join(root, "..", "protocol", "schema", "manifest.schema.json"))
	if err != nil {
		return nil, err
	}
	files[prefix+"schema/manifest.schema.json"] = pack.File{Data: schema, Mode: 0o644}
	return files, nil
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
	flag.Parse()
	path, err := Build(*root, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build-release:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}
