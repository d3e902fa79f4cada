// Package hostsdk is the Go SDK of protocol v2 chat-bot plugins: one plugin definition served over stdio
// JSON-RPC (Run) or HTTP (HTTPHandler), typed replies with mentions, and context.Context cancellation.
//
//	plugin := hostsdk.MustLoad("manifest.json")
//	plugin.Command("echo", func(ctx *hostsdk.Context) error {
//		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" said "), hostsdk.Literal(ctx.Args()))
//		return err
//	})
//	plugin.Run()
package hostsdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// SDKName and SDKVersion are what the plugin reports in the handshake.
const (
	SDKName    = "host-sdk-go"
	SDKVersion = wire.SDKVersion // generated from libs/protocol/src/versions.json
)

// Handler handles one message event. Returning an error reports it as the event's failure: a
// *HandlerError with the plugin's own code, anything else as plugin.handler_failed.
type Handler func(ctx *Context) error

// LifecycleHandler runs when the plugin starts or stops.
type LifecycleHandler func(ctx *Lifecycle) error

// SettingsHandler sees new settings before they replace the previous ones; an error keeps the old values
// and tells the operator why.
type SettingsHandler func(ctx *Lifecycle, previous Settings) error

// Plugin is one plugin definition: its manifest and its handlers. Define the handlers before Run or
// HTTPHandler; they are not changed afterwards.
type Plugin struct {
	manifest          *wire.StdioManifest
	pluginID          string
	commands          map[string]Handler
	onMessage         Handler
	onStart           LifecycleHandler
	onStop            LifecycleHandler
	onSettingsChanged SettingsHandler
	intercepts        bool
	// events are the handlers of the event types other than message.created, by eventType.
	events map[string]EventHandler
}

var pluginIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*(?:\.[a-z][a-z0-9_-]*)+$`)

// New defines a plugin without a manifest file (tests and HTTP services that build their manifest in
// code). Command handlers then apply to any command the host matched with that name.
func New(pluginID string) (*Plugin, error) {
	if len(pluginID) > wire.LimitMaxPluginIDLength || !pluginIDPattern.MatchString(pluginID) {
		return nil, sdkError(wire.ErrSDKDefinitionInvalid, "plugin id %q is not a lowercase dotted identifier such as com.example.echo", pluginID)
	}
	return &Plugin{pluginID: pluginID, commands: map[string]Handler{}}, nil
}

// Load reads manifest.json and defines the plugin it describes. A relative path is looked up in the
// working directory, then next to the executable (where a packed plugin has it).
func Load(path string) (*Plugin, error) {
	data, err := readManifestFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, err
	}
	return &Plugin{manifest: m, pluginID: m.PluginID, commands: map[string]Handler{}}, nil
}

// MustLoad is Load that panics with the *SDKError when the manifest cannot be read or is invalid.
func MustLoad(path string) *Plugin {
	p, err := Load(path)
	if err != nil {
		panic(err)
	}
	return p
}

func readManifestFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil && !filepath.IsAbs(path) && errors.Is(err, os.ErrNotExist) {
		if exe, exeErr := os.Executable(); exeErr == nil {
			if alt, altErr := os.ReadFile(filepath.Join(filepath.Dir(exe), path)); altErr == nil {
				return alt, nil
			}
		}
	}
	if err != nil {
		return nil, sdkError(wire.ErrSDKManifestInvalid, "cannot read %s: %v", path, err)
	}
	if len(data) > wire.LimitMaxManifestBytes {
		return nil, sdkError(wire.ErrSDKManifestInvalid, "%s is %d bytes, more than %d", path, len(data), wire.LimitMaxManifestBytes)
	}
	return data, nil
}

// ParseManifest decodes and checks a stdio manifest as the host's install check does (the protocol's
// JSON Schema plus the rules it cannot express): every fault is reported with the host's code and path.
func ParseManifest(data []byte) (*wire.StdioManifest, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	invalid := func(issues ...Issue) error {
		lines := make([]string, len(issues))
		for i, is := range issues {
			lines[i] = fmt.Sprintf("%s at %q: %s", is.Code, is.Path, is.Message)
		}
		return &SDKError{Code: wire.ErrSDKManifestInvalid, Detail: "manifest.json is invalid: " + strings.Join(lines, "; "), Issues: issues}
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil, invalid(Issue{wire.CodeManifestJSONInvalid, "", "manifest.json is not valid JSON: " + err.Error()})
	}
	if _, issues := validateManifest(tree, false); issues != nil {
		return nil, invalid(issues...)
	}
	var m wire.StdioManifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, invalid(Issue{wire.CodeManifestFieldInvalid, "", err.Error()})
	}
	return &m, nil
}

// PluginID is the plugin's id.
func (p *Plugin) PluginID() string { return p.pluginID }

// Manifest is the loaded manifest, or nil for a plugin defined with New.
func (p *Plugin) Manifest() *wire.StdioManifest { return p.manifest }

// Command sets the handler of a command of the manifest; the host matches the words and passes the
// match in the event (ctx.Command(), ctx.Args()). It panics with SDK_DEFINITION_INVALID when the
// manifest declares no such command.
func (p *Plugin) Command(name string, h Handler) *Plugin {
	if p.manifest != nil {
		found := false
		for _, c := range p.manifest.Commands {
			found = found || c.Name == name
		}
		if !found {
			panic(sdkError(wire.ErrSDKDefinitionInvalid, "Command(%q): manifest.json declares no command %q; add it to \"commands\"", name, name))
		}
	}
	if h == nil {
		panic(sdkError(wire.ErrSDKDefinitionInvalid, "Command(%q): the handler is nil", name))
	}
	p.commands[name] = h
	return p
}

// OnMessage sets the handler of events no command handler takes (every message the plugin sees, when
// it has no commands).
func (p *Plugin) OnMessage(h Handler) *Plugin {
	p.onMessage = h
	return p
}

// OnStart runs after the handshake; events wait until it returns. An error stops the plugin.
func (p *Plugin) OnStart(h LifecycleHandler) *Plugin {
	p.onStart = h
	return p
}

// OnStop runs when the plugin stops, after running handlers finished.
func (p *Plugin) OnStop(h LifecycleHandler) *Plugin {
	p.onStop = h
	return p
}

// OnSettingsChanged sees the operator's new settings while the plugin runs.
func (p *Plugin) OnSettingsChanged(h SettingsHandler) *Plugin {
	p.onSettingsChanged = h
	return p
}

// Intercepts declares that handlers may call ctx.Intercept(). Over stdio the manifest must declare the
// messages.intercept permission (the handshake is refused otherwise); over HTTP the manifest served gets
// the InterceptMessages capability.
func (p *Plugin) Intercepts() *Plugin {
	p.intercepts = true
	return p
}

func (p *Plugin) handlerFor(event *wire.MessageEvent) Handler {
	if event.Command != nil {
		if h, ok := p.commands[event.Command.Name]; ok {
			return h
		}
	}
	return p.onMessage
}

func (p *Plugin) permissions() []string {
	if p.manifest == nil {
		return nil
	}
	return p.manifest.Permissions
}

func (p *Plugin) hasPermission(name string) bool {
	if p.manifest == nil {
		return true // unknown: the host checks
	}
	for _, q := range p.manifest.Permissions {
		if q == name {
			return true
		}
	}
	return false
}

func (p *Plugin) usage(w io.Writer) {
	title := p.pluginID
	if p.manifest != nil {
		title = fmt.Sprintf("%s %s (%s)", p.manifest.Name, p.manifest.Version, p.pluginID)
	}
	fmt.Fprintf(w, `%s: a protocol v2 chat-bot plugin built with %s %s.

The host starts this program with %s and speaks JSON-RPC over stdin/stdout;
it is not meant to be run by hand.

  Install: pack it (go run <sdk>/cmd/host-pack, or host-plugin pack) and upload
           artifacts/<pluginId>-<goos>-<goarch>.zip to the host (POST /api/plugins/packages).
  Test:    drive it with hostsdktest.Start in a go test.
  Debug:   run it with %s and write Content-Length framed JSON-RPC to stdin.
  HTTP:    run it with --http 127.0.0.1:8080 --secret-file <file> and register the URL with the host.
`, title, SDKName, SDKVersion, wire.StdioFlag, wire.StdioFlag)
}
