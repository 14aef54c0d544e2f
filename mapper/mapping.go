package mapper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bulkload/bulkload/lead"
)

// Mapping is a partner's mapping file (--mapping FILE): how the partner's
// export differs from the canonical one. The format is described in the
// package doc. A Mapping is not modified after ParseMapping returns it, so it
// may be shared by goroutines that only read it.
type Mapping struct {
	// Columns maps a partner header to a canonical field name. The reader
	// applies it; ParseMapping only checks that each target names a field.
	Columns map[string]string
	// Values maps, per field, a partner value to the value the rules accept.
	// The Mapper matches keys trimmed and case-insensitively and applies them
	// before validation.
	Values map[lead.Field]map[string]string
}

// LoadMapping reads and checks the mapping file at path. Its errors name the
// file, the line where there is one, and the bad key or field.
func LoadMapping(path string) (*Mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open mapping file: %w", err)
	}
	defer f.Close()
	return ParseMapping(f, path)
}

// ParseMapping reads a mapping file from r; name is used in errors. Unknown
// top-level keys and unknown field names are errors, so that a typo cannot
// silently do nothing.
func ParseMapping(r io.Reader, name string) (*Mapping, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read mapping file %s: %w", name, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("mapping file %s: %w", name, err)
	}
	m := &Mapping{Columns: map[string]string{}, Values: map[lead.Field]map[string]string{}}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return m, nil // an empty file maps nothing
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return m, nil
	}
	bad := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("mapping file %s line %d: "+format, append([]any{name, n.Line}, args...)...)
	}
	if root.Kind != yaml.MappingNode {
		return nil, bad(root, "want a mapping with the keys columns and values")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] {
			return nil, bad(k, "key %q given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "columns":
			if err := parseColumns(v, m, bad); err != nil {
				return nil, err
			}
		case "values":
			if err := parseValues(v, m, bad); err != nil {
				return nil, err
			}
		default:
			return nil, bad(k, "unknown key %q (want columns or values)", k.Value)
		}
	}
	return m, nil
}

type badFunc func(n *yaml.Node, format string, args ...any) error

// isNull reports whether n is an empty YAML value, as in "columns:" with
// nothing under it.
func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func parseColumns(n *yaml.Node, m *Mapping, bad badFunc) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return bad(n, "columns: want a mapping of partner header to field name")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
			return bad(k, "columns: want a partner header name as the key")
		}
		if v.Kind != yaml.ScalarNode {
			return bad(v, "columns: %q: want a field name", k.Value)
		}
		if _, err := fieldNamed(v.Value); err != nil {
			return bad(v, "columns: %q: %w", k.Value, err)
		}
		if _, dup := m.Columns[k.Value]; dup {
			return bad(k, "columns: header %q given twice", k.Value)
		}
		m.Columns[k.Value] = v.Value
	}
	return nil
}

func parseValues(n *yaml.Node, m *Mapping, bad badFunc) error {
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return bad(n, "values: want a mapping of field name to value map")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f, err := fieldNamed(k.Value)
		if err != nil {
			return bad(k, "values: %w", err)
		}
		if _, dup := m.Values[f]; dup {
			return bad(k, "values: field %s given twice", f)
		}
		if isNull(v) {
			continue
		}
		if v.Kind != yaml.MappingNode {
			return bad(v, "values: %s: want a mapping of partner value to value", f)
		}
		vm := make(map[string]string, len(v.Content)/2)
		folded := make(map[string]string, len(v.Content)/2)
		for j := 0; j+1 < len(v.Content); j += 2 {
			from, to := v.Content[j], v.Content[j+1]
			fromText, err := scalarText(from)
			if err != nil || strings.TrimSpace(fromText) == "" {
				return bad(from, "values: %s: want a non-empty partner value as the key", f)
			}
			toText, err := scalarText(to)
			if err != nil {
				return bad(to, "values: %s: %q: %w", f, fromText, err)
			}
			key := strings.ToLower(strings.TrimSpace(fromText))
			if prev, dup := folded[key]; dup {
				return bad(from, "values: %s: %q and %q are the same key (keys are matched ignoring case and surrounding spaces)", f, prev, fromText)
			}
			folded[key] = fromText
			vm[fromText] = toText
		}
		m.Values[f] = vm
	}
	return nil
}

// errUnknownField is wrapped by the errors for names that are no field.
var errUnknownField = errors.New("unknown field")

// fieldNamed returns the field whose wire name is name, exactly.
func fieldNamed(name string) (lead.Field, error) {
	if f, ok := lead.FieldByName(name); ok {
		return f, nil
	}
	for f := lead.Field(0); f < lead.NumFields; f++ {
		if strings.EqualFold(f.String(), strings.TrimSpace(name)) {
			return 0, fmt.Errorf("%w %q (did you mean %s? field names are case-sensitive)", errUnknownField, name, f)
		}
	}
	return 0, fmt.Errorf("%w %q (want a LeadInput field name such as residenceTypeId)", errUnknownField, name)
}

// scalarText returns a YAML scalar as the text the rules read: strings as
// written, integers in decimal, booleans as true or false, and an empty
// value (~ or nothing) as "", which the Mapper treats as an absent cell.
func scalarText(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errors.New("want a single value, not a list or a mapping")
	}
	switch n.Tag {
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return "", fmt.Errorf("want an integer: %w", err)
		}
		return strconv.FormatInt(i, 10), nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return "", fmt.Errorf("want true or false: %w", err)
		}
		return strconv.FormatBool(b), nil
	case "!!null":
		return "", nil
	}
	return n.Value, nil
}
