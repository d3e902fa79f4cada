package hostsdktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

// The command-match vectors: the test host must route exactly like the host.
func TestCommandMatchVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "protocol", "vectors", "command-match.json"))
	if err != nil {
		t.Skipf("the protocol vectors are not beside the SDK: %v", err)
	}
	var file struct {
		Kind  string `json:"kind"`
		Cases []struct {
			Name         string         `json:"name"`
			Text         string         `json:"text"`
			Commands     []wire.Command `json:"commands"`
			Conversation string         `json:"conversation"`
			Expect       *struct {
				wire.CommandMatch
				Index int `json:"index"`
			} `json:"expect"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if file.Kind != "command-match" || len(file.Cases) == 0 {
		t.Fatalf("unexpected file: kind %q, %d cases", file.Kind, len(file.Cases))
	}
	for _, c := range file.Cases {
		t.Run(c.Name, func(t *testing.T) {
			got, index := MatchCommand(c.Text, c.Commands, c.Conversation)
			if c.Expect == nil {
				if got != nil {
					t.Fatalf("want no match, got %+v", got)
				}
				return
			}
			if got == nil || *got != c.Expect.CommandMatch || index != c.Expect.Index {
				t.Fatalf("got %+v at %d, want %+v at %d", got, index, c.Expect.CommandMatch, c.Expect.Index)
			}
		})
	}
}
