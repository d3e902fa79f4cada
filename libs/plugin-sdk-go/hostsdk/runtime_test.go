package hostsdk

import (
	"runtime"
	"testing"
)

// A stdio plugin runs on one processor unless GOMAXPROCS is set in its environment.
func TestOneProcessorUnlessGOMAXPROCSIsSet(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(3)
	env := map[string]string{"GOMAXPROCS": "3"}
	if oneProcessor(func(k string) string { return env[k] }) || runtime.GOMAXPROCS(0) != 3 {
		t.Fatalf("GOMAXPROCS=3 in the environment was overridden: %d", runtime.GOMAXPROCS(0))
	}
	delete(env, "GOMAXPROCS")
	if !oneProcessor(func(k string) string { return env[k] }) || runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("without GOMAXPROCS in the environment: %d processors, want 1", runtime.GOMAXPROCS(0))
	}
}
