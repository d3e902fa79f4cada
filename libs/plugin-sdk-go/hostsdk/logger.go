package hostsdk

import (
	"context"
	"log/slog"
	"slices"
	"sort"
)

// LogLevel is a level of log.write.
type LogLevel string

// Log levels.
const (
	LevelDebug LogLevel = "debug"
	LevelInfo  LogLevel = "info"
	LevelWarn  LogLevel = "warn"
	LevelError LogLevel = "error"
)

// Logger writes to the plugin's log in the host (stdio: log.write; HTTP: HTTPOptions.Log, stderr by
// default). It is a *slog.Logger whose handler writes log.write: a record's level becomes the nearest
// log.write level at or below it (slog.LevelWarn is "warn"), its message the message, and its attributes
// (of With and WithGroup too, groups as nested objects) the fields; its time is left to the host. It never
// blocks the caller for long and never fails: a line the host refuses goes to stderr. A handler's Logger
// (ctx.Log()) names the handler's event in every line, so the host shows the line with that event; the
// plugin's own (OnStart, OnStop, a timer) names none.
//
//	ctx.Log().Warn("the weather service is slow", "city", city, "ms", elapsed.Milliseconds())
//	log := slog.New(ctx.Log().Handler()) // or ctx.Log().Logger, for code that takes a *slog.Logger
//
// Debug, Info, Warn and Error also take the fields map of earlier releases as their only argument
// (Info("ready", map[string]any{"port": 80}), or nil).
type Logger struct {
	*slog.Logger
}

func newLogger(write func(level LogLevel, message string, fields map[string]any)) *Logger {
	return &Logger{Logger: slog.New(&logHandler{write: write})}
}

// Debug logs at debug level; args are slog's key-value pairs or slog.Attr values.
func (l *Logger) Debug(msg string, args ...any) { l.log(slog.LevelDebug, msg, args) }

// Info logs at info level.
func (l *Logger) Info(msg string, args ...any) { l.log(slog.LevelInfo, msg, args) }

// Warn logs at warn level.
func (l *Logger) Warn(msg string, args ...any) { l.log(slog.LevelWarn, msg, args) }

// Error logs at error level.
func (l *Logger) Error(msg string, args ...any) { l.log(slog.LevelError, msg, args) }

// log is slog's Log, taking a lone map[string]any (or nil) as the fields.
func (l *Logger) log(level slog.Level, msg string, args []any) {
	if len(args) == 1 {
		switch fields := args[0].(type) {
		case nil:
			args = nil
		case map[string]any:
			args = fieldArgs(fields)
		}
	}
	l.Logger.Log(context.Background(), level, msg, args...)
}

// fieldArgs are the attributes of a fields map, in the order of their keys.
func fieldArgs(fields map[string]any) []any {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = slog.Any(k, fields[k])
	}
	return args
}

// logHandler is the slog.Handler of a Logger: every record is one call of write. fields holds the
// attributes of With (already converted), groups the open groups of WithGroup.
type logHandler struct {
	write  func(level LogLevel, message string, fields map[string]any)
	fields map[string]any
	groups []string
}

// Enabled is true at every level: the host keeps or drops lines by its own level.
func (h *logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	fields := h.fields
	if r.NumAttrs() > 0 {
		fields = cloneFields(h.fields)
		at := openGroups(fields, h.groups)
		r.Attrs(func(a slog.Attr) bool {
			addAttr(at, a)
			return true
		})
	}
	h.write(levelOf(r.Level), r.Message, fields)
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	next := *h
	next.fields = cloneFields(h.fields)
	at := openGroups(next.fields, h.groups)
	for _, a := range attrs {
		addAttr(at, a)
	}
	return &next
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	next := *h
	next.groups = append(slices.Clip(h.groups), name)
	return &next
}

// levelOf is the log.write level of a slog level: the nearest one at or below it.
func levelOf(l slog.Level) LogLevel {
	switch {
	case l >= slog.LevelError:
		return LevelError
	case l >= slog.LevelWarn:
		return LevelWarn
	case l >= slog.LevelInfo:
		return LevelInfo
	}
	return LevelDebug
}

// cloneFields copies the top level of fields (a new map even for nil); openGroups copies the group maps
// it enters, so a handler's own fields are never changed by the records and handlers made from it.
func cloneFields(fields map[string]any) map[string]any {
	c := make(map[string]any, len(fields)+4)
	for k, v := range fields {
		c[k] = v
	}
	return c
}

// openGroups returns the map of the innermost group, creating or copying the maps on the way.
func openGroups(fields map[string]any, groups []string) map[string]any {
	at := fields
	for _, g := range groups {
		inner, _ := at[g].(map[string]any)
		inner = cloneFields(inner)
		at[g] = inner
		at = inner
	}
	return at
}

// addAttr puts one attribute into fields: a group as a nested object (an unnamed group's attributes
// inline), an error as its message, anything else as its value (JSON-encoded as log.write sends it).
func addAttr(fields map[string]any, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		attrs := v.Group()
		if len(attrs) == 0 {
			return
		}
		at := fields
		if a.Key != "" {
			at = openGroups(fields, []string{a.Key})
		}
		for _, inner := range attrs {
			addAttr(at, inner)
		}
		return
	}
	if a.Key == "" && v.Kind() == slog.KindAny && v.Any() == nil {
		return // an empty Attr is ignored
	}
	if err, ok := v.Any().(error); ok && v.Kind() == slog.KindAny {
		fields[a.Key] = err.Error()
		return
	}
	fields[a.Key] = v.Any()
}
