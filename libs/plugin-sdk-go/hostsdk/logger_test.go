package hostsdk

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"testing"
	"time"
)

type logLine struct {
	level   LogLevel
	message string
	fields  map[string]any
}

func recordingLogger() (*Logger, *[]logLine) {
	var lines []logLine
	return newLogger(func(level LogLevel, message string, fields map[string]any) {
		lines = append(lines, logLine{level, message, fields})
	}), &lines
}

// The Logger is a *slog.Logger whose records become log.write lines: levels, key-value pairs, attributes,
// With and WithGroup as nested objects, errors as their messages.
func TestLoggerWritesSlogRecordsAsLogWriteLines(t *testing.T) {
	log, lines := recordingLogger()
	log.Warn("slow", "city", "Oslo", "ms", 1200)
	log.With("plugin", "weather").WithGroup("req").Info("done", slog.Int("status", 200), "err", errors.New("boom"))
	var l *slog.Logger = log.Logger
	l.Log(context.Background(), slog.LevelDebug-4, "trace", slog.Group("g", "a", true), slog.Group("empty"))
	l.Log(context.Background(), slog.LevelError+4, "fatal")
	log.InfoContext(context.Background(), "took", "d", 2*time.Second)
	want := []logLine{
		{LevelWarn, "slow", map[string]any{"city": "Oslo", "ms": int64(1200)}},
		{LevelInfo, "done", map[string]any{"plugin": "weather", "req": map[string]any{"status": int64(200), "err": "boom"}}},
		{LevelDebug, "trace", map[string]any{"g": map[string]any{"a": true}}},
		{LevelError, "fatal", nil},
		{LevelInfo, "took", map[string]any{"d": 2 * time.Second}},
	}
	if !reflect.DeepEqual(*lines, want) {
		t.Fatalf("lines\n%#v\nwant\n%#v", *lines, want)
	}
}

// A handler made with With or WithGroup leaves the one it came from unchanged.
func TestLoggerHandlersDoNotShareFields(t *testing.T) {
	log, lines := recordingLogger()
	base := log.With("a", 1).WithGroup("g")
	base.With("b", 2).Info("one")
	base.Info("two", "c", 3)
	log.Info("three")
	want := []logLine{
		{LevelInfo, "one", map[string]any{"a": int64(1), "g": map[string]any{"b": int64(2)}}},
		{LevelInfo, "two", map[string]any{"a": int64(1), "g": map[string]any{"c": int64(3)}}},
		{LevelInfo, "three", nil},
	}
	if !reflect.DeepEqual(*lines, want) {
		t.Fatalf("lines\n%#v\nwant\n%#v", *lines, want)
	}
}

// The fields map of earlier releases still works as the only argument, and so does nil.
func TestLoggerTakesAFieldsMap(t *testing.T) {
	log, lines := recordingLogger()
	log.Info("ready", map[string]any{"port": 8080, "host": "local"})
	log.Error("failed", nil)
	var fields map[string]any
	log.Debug("nil map", fields)
	want := []logLine{
		{LevelInfo, "ready", map[string]any{"port": int64(8080), "host": "local"}},
		{LevelError, "failed", nil},
		{LevelDebug, "nil map", nil},
	}
	if !reflect.DeepEqual(*lines, want) {
		t.Fatalf("lines\n%#v\nwant\n%#v", *lines, want)
	}
}
