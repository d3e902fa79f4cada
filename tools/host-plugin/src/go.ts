import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { RELEASE_VERSIONS } from '@host/protocol';
import { findGo as findGoToolchain, goEnv, goSdkModulePath, GoToolchainError, MIN_GO } from '@host/plugin-sdk-go/toolchain';
import { CliError } from './errors';
import { richStarterManifest, STARTER_IMAGE_URL } from './starter-rich';

/**
 * Go plugin projects: `init --lang go` writes one, and `pack` inside one runs
 * the Go SDK's own packer (`go run plugin-host.dev/sdk-go/v2/cmd/host-pack`), so
 * the Node CLI and the Go command give the same ZIP. The project carries a
 * copy of the SDK module in sdk-go/ (standard library only) and points its
 * go.mod at it, so its tests and the packer run offline with nothing but Go.
 */

/** The SDK version the Go templates name, from the one version source; hostsdk.SDKVersion says the same (a test checks). */
export const GO_SDK_VERSION: string = RELEASE_VERSIONS.sdkVersion;

/** The Go SDK's module path, with its major version suffix (`plugin-host.dev/sdk-go/v2`). */
export const GO_SDK_MODULE = goSdkModulePath(GO_SDK_VERSION);

/** The oldest Go the SDK supports (its go.mod says the same); from the SDK's toolchain lookup. */
export { MIN_GO };

export interface GoInitOptions {
  pluginId: string;
  name: string;
  author: string;
  description: string;
}

/** The executable name: the last segment of the plugin id. */
export function goExecutableName(pluginId: string): string {
  return pluginId.slice(pluginId.lastIndexOf('.') + 1);
}

/**
 * The module path of a new project: the plugin id's domain turned around, then the executable name
 * (com.example.go-echo -> example.com/go-echo), so `go build` writes the executable the package launches.
 */
export function goModulePath(pluginId: string): string {
  const segments = pluginId.split('.');
  const exe = segments.pop()!;
  return `${segments.reverse().join('.')}/${exe}`;
}

/** The files of a new Go plugin project, by path (the SDK copy is added by copyGoSdk). */
export function goProjectFiles(o: GoInitOptions): Map<string, string> {
  const exe = goExecutableName(o.pluginId);
  const files = new Map<string, string>();
  files.set('manifest.json', richStarterManifest({ ...o, sdkVersion: GO_SDK_VERSION, start: { command: `./${exe}`, args: [] } }));
  files.set(
    'go.mod',
    `module ${goModulePath(o.pluginId)}

go ${MIN_GO.join('.')}

require ${GO_SDK_MODULE} v${GO_SDK_VERSION}

// The SDK is copied into sdk-go/ so the project builds offline.
replace ${GO_SDK_MODULE} => ./sdk-go
`,
  );
  files.set(
    'main.go',
    `// Command ${exe} is ${o.name}: a protocol v2 chat-bot plugin.
package main

import (
	"strings"

	"${GO_SDK_MODULE}/hostsdk"
	"${GO_SDK_MODULE}/hostsdk/wire"
)

// catURL is the picture /cat sends: replace it with your own, an http or https URL the platform can
// fetch (PNG or JPEG).
const catURL = "${STARTER_IMAGE_URL}"

// newPlugin defines the plugin; main runs it and the tests drive it with the test host.
func newPlugin() *hostsdk.Plugin {
	plugin := hostsdk.MustLoad("manifest.json")
	plugin.Command("echo", func(ctx *hostsdk.Context) error {
		// "/echo hello" -> a Markdown reply that mentions the sender (groups only; one-to-one chats get
		// plain text). Literal shows the user's text as written: Markdown in it is escaped, not posted.
		text := ctx.Args()
		if text == "" {
			text = "nothing"
		}
		if ctx.Event().Conversation.Type == "group" {
			_, err := ctx.ReplyMarkdown(hostsdk.AtUser(ctx.Sender()), hostsdk.Text(" said: **"), hostsdk.Literal(text), hostsdk.Text("**"))
			return err
		}
		_, err := ctx.Reply(hostsdk.Text("You said: "), hostsdk.Text(text))
		return err
	})
	plugin.Command("cat", func(ctx *hostsdk.Context) error {
		// "/cat" -> an image with a caption (QQ groups and one-to-one chats).
		image := hostsdk.ImageFromURL(catURL)
		image.Alt = "a cat"
		_, err := ctx.Reply(hostsdk.Text("Here is a cat"), image)
		return err
	})
	plugin.Command("vote", func(ctx *hostsdk.Context) error {
		// "/vote" -> a question with two buttons under it (Markdown: groups only). A click comes back
		// to OnInteraction below with the button's data.
		if ctx.Event().Conversation.Type != "group" {
			_, err := ctx.Reply(hostsdk.Text("Votes work in groups."))
			return err
		}
		buttons := hostsdk.Keyboard([]wire.Button{
			hostsdk.Primary(hostsdk.CallbackButton("Yes", "vote:yes")),
			hostsdk.CallbackButton("No", "vote:no"),
		})
		_, err := ctx.ReplyMarkdown(hostsdk.Text("**Do you like cats?**"), hostsdk.WithKeyboard(buttons))
		return err
	})
	plugin.OnInteraction(func(ctx *hostsdk.EventContext) error {
		// A click on a callback button (manifest.json subscribes to "interaction.created").
		choice, ok := strings.CutPrefix(ctx.Data(), "vote:")
		if !ok {
			return nil
		}
		_, err := ctx.ReplyMarkdown(hostsdk.AtUser(*ctx.Sender()), hostsdk.Text(" voted **"), hostsdk.Literal(choice), hostsdk.Text("**"))
		return err
	})
	return plugin
}

func main() {
	newPlugin().Run()
}
`,
  );
  files.set(
    'main_test.go',
    `package main

import (
	"testing"

	"${GO_SDK_MODULE}/hostsdk/hostsdktest"
	"${GO_SDK_MODULE}/hostsdk/wire"
)

func TestEchoMentionsTheSenderInMarkdown(t *testing.T) {
	host := hostsdktest.Start(t, newPlugin(), hostsdktest.Options{})
	d := host.Send(hostsdktest.Message{Text: "/echo hello"})
	if d.Ack == nil || !d.Ack.Accepted || d.Completion == nil || d.Completion.Error != nil {
		t.Fatalf("ack %+v, completion %+v", d.Ack, d.Completion)
	}
	replies := host.RepliesTo(d.Event.EventID)
	if len(replies) != 1 || replies[0].Format != "markdown" {
		t.Fatalf("replies %+v", replies)
	}
	if mention, ok := replies[0].Parts[0].(wire.MessagePartMentionUser); !ok || mention.ID != d.Event.Sender.MentionID {
		t.Fatalf("the reply does not start with the sender's mention: %#v", replies[0].Parts[0])
	}
	if got := replies[0].Text(); got != "@test-user said: **hello**" {
		t.Fatalf("text %q", got)
	}
}

func TestOneToOneChatsGetText(t *testing.T) {
	host := hostsdktest.Start(t, newPlugin(), hostsdktest.Options{})
	d := host.Send(hostsdktest.Message{Text: "/echo hi", Conversation: "c2c"})
	if r := host.RepliesTo(d.Event.EventID); len(r) != 1 || r[0].Format != "text" || r[0].Text() != "You said: hi" {
		t.Fatalf("replies %+v", r)
	}
}

func TestCatRepliesWithAnImage(t *testing.T) {
	host := hostsdktest.Start(t, newPlugin(), hostsdktest.Options{})
	d := host.Send(hostsdktest.Message{Text: "/cat"})
	r := host.RepliesTo(d.Event.EventID)
	if len(r) != 1 {
		t.Fatalf("replies %+v", r)
	}
	if image, ok := r[0].Parts[1].(wire.MessagePartImage); !ok || image.URL != catURL {
		t.Fatalf("the reply has no image: %#v", r[0].Parts)
	}
}

func TestAVoteButtonClickIsAnswered(t *testing.T) {
	host := hostsdktest.Start(t, newPlugin(), hostsdktest.Options{})
	asked := host.Send(hostsdktest.Message{Text: "/vote"})
	r := host.RepliesTo(asked.Event.EventID)
	if len(r) != 1 || r[0].Keyboard == nil {
		t.Fatalf("the question has no buttons: %+v", r)
	}
	yes := r[0].Keyboard.Rows[0].Buttons[0]
	// The test host clicks the button as the host delivers a click: interaction.created.
	clicked := host.Click(yes.Data, yes.ID, hostsdktest.Message{})
	if clicked.Ack == nil || !clicked.Ack.Accepted || clicked.Completion == nil || clicked.Completion.Error != nil {
		t.Fatalf("ack %+v, completion %+v", clicked.Ack, clicked.Completion)
	}
	if got := host.RepliesTo(clicked.Event.EventID); len(got) != 1 || got[0].Text() != "@test-user voted **yes**" {
		t.Fatalf("answer %+v", got)
	}
}
`,
  );
  files.set('.gitignore', `artifacts/\n/${exe}\n/${exe}.exe\n`);
  files.set(
    'README.md',
    `# ${o.name}

A protocol v2 plugin (\`${o.pluginId}\`) written with the Go SDK \`hostsdk\` (a copy is in \`sdk-go/\`;
standard library only, Go ${MIN_GO.join('.')} or newer).

\`\`\`sh
go test ./...                                       # tests with the SDK's test host
go run ${GO_SDK_MODULE}/cmd/host-pack               # writes artifacts/${o.pluginId}-<goos>-<goarch>.zip for this machine
go run ${GO_SDK_MODULE}/cmd/host-pack -goos linux -goarch arm64   # for another platform (or: host-plugin pack)
go build && ./${exe} --http 127.0.0.1:8787 --secret-file signing-secret   # as an HTTP plugin (register the URL with the host)
\`\`\`

Upload the ZIP to the host (\`POST /api/plugins/packages\`), start it, and send \`/echo hello\`, \`/cat\` (an image) or
\`/vote\` (buttons; a click comes back to \`OnInteraction\`) in a group.
The packaged manifest launches the compiled \`./${exe}\` (\`${exe}.exe\` on Windows) and lists only the
platform it was built for, so a host on another platform refuses it at install.

To require the SDK as a module instead of the copy (offline, from the module proxy folder of the SDK release
archive; its README, "From the release archive", has the details):

\`\`\`sh
export GOPROXY="file://<unzipped SDK archive>/goproxy" GONOSUMDB=${GO_SDK_MODULE.split('/')[0]}
go mod edit -dropreplace ${GO_SDK_MODULE} -droprequire ${GO_SDK_MODULE} && rm -r sdk-go && go mod tidy
\`\`\`
`,
  );
  return files;
}

/**
 * The SDK module to copy into new projects: libs/plugin-sdk-go beside this
 * CLI in a checkout of the host repository, or the copy the build puts into
 * dist/sdk/go/sdk-go, which the published package carries (scripts/bundle-sdks.ts).
 */
export function goSdkSource(cliDir: string = __dirname): string {
  const candidates = [resolve(cliDir, '..', '..', '..', 'libs', 'plugin-sdk-go'), resolve(cliDir, 'sdk', 'go', 'sdk-go')];
  const found = candidates.find((dir) => existsSync(join(dir, 'go.mod')) && existsSync(join(dir, 'hostsdk')));
  if (!found) throw new CliError('GO_SDK_MISSING', `looked in ${candidates.join(', ')}`);
  return found;
}

/** What of the SDK module a project needs: go.mod, the packages and the packer, without tests and samples. */
function sdkFileWanted(source: string, path: string): boolean {
  const rel = path.slice(source.length).split(sep).join('/');
  if (rel === '' || rel === '/go.mod' || rel === '/README.md') return true;
  if (!(rel.startsWith('/hostsdk') || rel.startsWith('/cmd'))) return false;
  return !rel.endsWith('_test.go') && !rel.includes('/testdata');
}

/** Copies the SDK module into the project's sdk-go/. */
export function copyGoSdk(target: string, source: string = goSdkSource()): void {
  cpSync(source, join(target, 'sdk-go'), { recursive: true, filter: (path) => sdkFileWanted(source, path) });
}

/** True when the folder is a Go plugin project: manifest.json beside a go.mod. */
export function isGoProject(dir: string): boolean {
  return existsSync(join(dir, 'go.mod')) && existsSync(join(dir, 'manifest.json'));
}

/**
 * The go command, found by the Go SDK's toolchain lookup (HOST_PLUGIN_GO or GO when set, else `go`
 * on PATH or Debian's /usr/lib/go-1.NN, at least MIN_GO); GO_NOT_FOUND when there is none.
 */
export function findGo(): string {
  try {
    return findGoToolchain();
  } catch (error) {
    if (error instanceof GoToolchainError) throw new CliError('GO_NOT_FOUND', error.message);
    throw error;
  }
}

/**
 * Runs the Go packer in `dir` and returns its exit code; its output goes
 * straight to the terminal. The target is this machine's platform unless
 * goos/goarch are given.
 */
export function packGo(dir: string, options: { outDir?: string; goos?: string; goarch?: string } = {}): number {
  const go = findGo();
  const args = ['run', `${GO_SDK_MODULE}/cmd/host-pack`];
  if (options.outDir) args.push('-out', options.outDir);
  if (options.goos) args.push('-goos', options.goos);
  if (options.goarch) args.push('-goarch', options.goarch);
  const result = spawnSync(go, args, {
    cwd: dir,
    stdio: 'inherit',
    env: goEnv(go),
  });
  if (result.error) throw new CliError('GO_NOT_FOUND', `${go} could not be started: ${result.error.message}`);
  return result.status ?? 1;
}

/** The Go SDK version in the SDK's own source, generated into package wire (for the test that keeps GO_SDK_VERSION in step). */
export function goSdkSourceVersion(): string | undefined {
  const text = readFileSync(join(goSdkSource(), 'hostsdk', 'wire', 'catalog.go'), 'utf8');
  return /^const SDKVersion = "([^"]+)"/m.exec(text)?.[1];
}
