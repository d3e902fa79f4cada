// The manifest checks: the schema's verdict mapped to the host's manifest.* codes, and the rules JSON Schema
// cannot express that the host applies at install (names, unique command words, capabilities, routing).

package hostsdk

import (
	"fmt"
	"sort"
	"strings"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

func manifestCode(f fault) string {
	where := f.path.String()
	switch {
	case f.kind == "required":
		return wire.CodeManifestFieldRequired
	case f.kind == "unknown":
		return wire.CodeManifestFieldUnknown
	case where == "protocolVersion":
		return wire.CodeManifestProtocolVersionUnsupported
	case where == "pluginId" && (f.keyword == "pattern" || f.keyword == "maxLength" || f.keyword == "minLength"):
		return wire.CodeManifestPluginIDInvalid
	case where == "transport.type":
		return wire.CodeManifestTransportUnsupported
	case f.path != nil && f.path.index >= 0 && f.path.parent != nil && f.path.parent.parent == nil && f.path.parent.key == "permissions":
		if f.keyword == "uniqueItems" {
			return wire.CodeManifestPermissionsDuplicate
		}
		return wire.CodeManifestPermissionsUnknown
	}
	return wire.CodeManifestFieldInvalid
}

// validateManifest checks a stdio manifest.json (http false) or an HTTP manifest (http true) as the host
// does; it returns the manifest with defaults, or the issues with manifest.* codes.
func validateManifest(v any, http bool) (map[string]any, []Issue) {
	file := "manifest.schema.json"
	if http {
		file = "http-manifest.schema.json"
	}
	n := documentSchema(file)
	var found []fault
	n.check(v, &found)
	var issues []Issue
	transportType := false
	for _, f := range found {
		transportType = transportType || f.path.String() == "transport.type"
	}
	for _, f := range found {
		where := f.path.String()
		if where == "transport.stdio" && transportType {
			continue // a wrong transport type is the one fault; its stdio block is moot
		}
		if where == "capabilities" && f.keyword == "enum" {
			issues = append(issues, capabilityIssues(v.(map[string]any)["capabilities"].(float64))...)
			continue
		}
		subject := where
		if subject == "" {
			subject = "the manifest"
		}
		issues = append(issues, Issue{Code: manifestCode(f), Path: where, Message: subject + " " + f.message})
	}
	if len(issues) > 0 {
		return nil, issues
	}
	manifest := n.withDefaults(v).(map[string]any)
	issues = routingIssues(manifest)
	if http {
		perms, _ := manifest["permissions"].([]any)
		caps, _ := manifest["capabilities"].(float64)
		for _, p := range perms {
			if p == wire.PermissionMessagesSend && int(caps)&2 == 0 {
				issues = append(issues, Issue{wire.CodeManifestCapabilitiesMissing, "capabilities", "messages.send needs the SendMessages capability (2)"})
			}
		}
	}
	if len(issues) > 0 {
		return nil, issues
	}
	return manifest, nil
}

func capabilityIssues(flags float64) []Issue {
	f := int64(flags)
	var issues []Issue
	if f&9 != 9 {
		issues = append(issues, Issue{wire.CodeManifestCapabilitiesMissing, "capabilities", "capabilities must include ReceiveMessages (1) and HttpTransport (8)"})
	}
	if f&^15 != 0 {
		issues = append(issues, Issue{wire.CodeManifestCapabilitiesUnknown, "capabilities", fmt.Sprintf("capabilities has unknown bits %d", f&^15)})
	}
	return issues
}

// routingIssues are the manifest rules JSON Schema cannot express: command words unique ignoring case,
// settings fields whose options, defaultValue and min/max fit their type.
func routingIssues(manifest map[string]any) []Issue {
	var issues []Issue
	words := map[string]string{}
	commands, _ := manifest["commands"].([]any)
	for i, c := range commands {
		command := c.(map[string]any)
		name := command["name"].(string)
		all := []any{name}
		if aliases, ok := command["aliases"].([]any); ok {
			all = append(all, aliases...)
		}
		for j, w := range all {
			word := w.(string)
			key := strings.ToLower(word)
			if owner, ok := words[key]; ok {
				path := fmt.Sprintf("commands[%d].name", i)
				if j > 0 {
					path = fmt.Sprintf("commands[%d].aliases[%d]", i, j-1)
				}
				issues = append(issues, Issue{wire.CodeManifestCommandsDuplicate, path,
					fmt.Sprintf("command word %q is already used by command %q; names and aliases must be unique (case-insensitive)", word, owner)})
			} else {
				words[key] = name
			}
		}
	}
	settings, _ := manifest["settings"].(map[string]any)
	fields, _ := settings["configSchema"].(map[string]any)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		field := fields[key].(map[string]any)
		base := (&vpath{index: -1, key: "settings"}).child("configSchema").child(key)
		issue := func(message, sub string) {
			issues = append(issues, Issue{wire.CodeManifestSettingsInvalid, base.child(sub).String(), message})
		}
		kind, _ := field["type"].(string)
		options, hasOptions := field["options"].([]any)
		if kind == "select" && len(options) == 0 {
			issue(`a "select" field needs at least one entry in "options"`, "options")
		}
		if _, present := field["options"]; kind != "select" && present {
			issue(`"options" is only for "select" fields`, "options")
		}
		if d, ok := field["defaultValue"]; ok {
			if kind == "secret" {
				issue(`a "secret" field cannot have a defaultValue; the operator enters it`, "defaultValue")
			}
			want := "string"
			if kind == "number" || kind == "boolean" {
				want = kind
			}
			if typeName(d) != want {
				issue(fmt.Sprintf("defaultValue of a %q field must be a %s", kind, want), "defaultValue")
			}
			if kind == "select" && hasOptions && len(options) > 0 {
				found := false
				for _, o := range options {
					if om, ok := o.(map[string]any); ok && sameValue(om["value"], d) {
						found = true
					}
				}
				if !found {
					issue("defaultValue must be the value of one of the options", "defaultValue")
				}
			}
		}
		_, hasMin := field["min"]
		_, hasMax := field["max"]
		if (hasMin || hasMax) && kind != "number" && kind != "string" {
			issue(`"min" and "max" apply to "number" (value) and "string" (length) fields only`, "min")
		}
	}
	return issues
}
