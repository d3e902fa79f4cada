package pack

import (
	"errors"
	"fmt"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// Codes lists the packaging codes this packer reports (the SDK's README lists them; a test checks both ways
// and that each is in the catalogue, wire.PackErrorCodes). Every packer of every language uses these codes
// for the same failure (docs/protocol/v2.md section 11.5).
var Codes = []string{
	wire.ErrPackUsage,
	wire.ErrPackManifestMissing,
	wire.ErrPackManifestInvalid,
	wire.ErrPackTransportNotStdio,
	wire.ErrPackEntryMissing,
	wire.ErrPackIncludeInvalid,
	wire.ErrPackSDKVersionMismatch,
	wire.ErrPackToolMissing,
	wire.ErrPackDependencyUnresolved,
	wire.ErrPackBuildFailed,
	wire.ErrPackPlatformUnsupported,
	wire.ErrPackOutputNotWritable,
}

// Error is a refusal of the packer: a packaging code of the catalogue, what happened, and lines that
// show more (the compiler's output).
type Error struct {
	Code    string
	Detail  string
	Details []string
}

func (e *Error) Error() string { return e.Code + ": " + e.Detail }

// Fix is the catalogue's message of the code: what to do.
func (e *Error) Fix() string {
	if c, ok := wire.LookupError(e.Code); ok {
		return c.Message
	}
	return ""
}

// Render is the text a command prints: `error CODE: what happened`, the details, then the fix.
func (e *Error) Render() string {
	lines := []string{"error " + e.Code + ": " + e.Detail}
	for _, d := range e.Details {
		lines = append(lines, "  - "+d)
	}
	return strings.Join(append(lines, "  fix: "+e.Fix()), "\n")
}

func fail(code string, format string, args ...any) *Error {
	return &Error{Code: code, Detail: fmt.Sprintf(format, args...)}
}

// CodeOf is the packaging code of an error Pack returned, or "" for another error.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
