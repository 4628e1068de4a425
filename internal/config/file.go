package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The settings file (--config or BEET_CONFIG) holds the same settings as
// the environment, one per line, flat:
//
//	# beet.toml
//	database_url = "postgres://beet@db/beet"
//	listen = ":8080"
//	BEET_ROLE = "worker"
//
//	# beet.yaml (or .yml)
//	database_url: postgres://beet@db/beet
//	sweep_interval: 5s
//
// A key is a variable's name, with or without the BEET_ prefix, in any
// case ("-" counts as "_"). Values are TOML strings ("…" with escapes, or
// '…' literal), or bare words (numbers, booleans, durations); # starts a
// comment. Tables, arrays and nesting are refused: every setting is one
// string, so a full TOML or YAML library (and its dependency tree) would
// buy nothing but ways to write a file Beet then has to reject.
//
// An unknown key is an error, not a warning: a file is written on purpose,
// and a misspelt key would silently leave its setting at the default.

// fileSettings maps BEET_* names to their text in the settings file; nil
// when there is no file.
func (f *Flags) readFile() (map[string]string, error) {
	path := f.file.s
	if !f.file.set {
		path = f.getenv("BEET_CONFIG")
	}
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("settings file: %w", err)
	}
	yaml := strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")
	m, err := parseFile(string(b), yaml)
	if err != nil {
		return nil, fmt.Errorf("settings file %s: %w", filepath.Base(path), err)
	}
	return m, nil
}

// parseFile reads the flat TOML (or YAML) subset described above.
func parseFile(text string, yaml bool) (map[string]string, error) {
	sep := "="
	if yaml {
		sep = ":"
	}
	out := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		n++
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") || (yaml && line == "---") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			return nil, fmt.Errorf("line %d: tables are not supported; settings are flat (KEY %s value)", n, sep)
		}
		key, value, ok := strings.Cut(line, sep)
		if !ok {
			return nil, fmt.Errorf("line %d: want KEY %s value", n, sep)
		}
		name, err := fileKey(strings.TrimSpace(key))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		v, err := fileValue(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("line %d (%s): %w", n, name, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d: %s is set twice", n, name)
		}
		out[name] = v
	}
	return out, nil
}

// fileKey turns a file key into its BEET_* name, or says it is unknown.
func fileKey(key string) (string, error) {
	name := strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
	if !strings.HasPrefix(name, "BEET_") {
		name = "BEET_" + name
	}
	if name == "BEET_CONFIG" {
		return "", fmt.Errorf("a settings file cannot name another")
	}
	if isSetting(name) {
		return name, nil
	}
	if s := suggest(name); s != "" {
		return "", fmt.Errorf("%q is not a setting; did you mean %s?", key, s)
	}
	return "", fmt.Errorf("%q is not a setting", key)
}

// fileValue reads a quoted or bare value and drops a trailing comment.
func fileValue(v string) (string, error) {
	switch {
	case strings.HasPrefix(v, `"`):
		end := closingQuote(v)
		if end < 0 {
			return "", fmt.Errorf("unterminated string")
		}
		s, err := strconv.Unquote(v[:end+1])
		if err != nil {
			return "", fmt.Errorf("bad string: %v", err)
		}
		return s, trailing(v[end+1:])
	case strings.HasPrefix(v, "'"):
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("unterminated string")
		}
		return v[1 : end+1], trailing(v[end+2:])
	case strings.HasPrefix(v, "[") || strings.HasPrefix(v, "{"):
		return "", fmt.Errorf("arrays and tables are not supported; write the value as one string")
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), nil
}

// closingQuote finds the end of a double-quoted string, past escapes.
func closingQuote(v string) int {
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

func trailing(rest string) error {
	rest = strings.TrimSpace(rest)
	if rest != "" && !strings.HasPrefix(rest, "#") {
		return fmt.Errorf("unexpected %q after the value", rest)
	}
	return nil
}
