package leadsim

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// checkVariables coerces variable values as the GraphQL specification's
// input coercion rules require (section 3.5 and 5.6), which gqlparser is
// laxer about: it takes the string "5000" for an Int and the number 5551234567
// for a String. A spec-compliant server (graphql-js, for one) refuses both,
// so the simulator does too, before gqlgen sees the values. vars must be
// decoded with json.Decoder.UseNumber. The messages follow graphql-js but
// never quote the value: clients copy error messages into logs and results
// files, and the value may be an SSN or a date of birth, under its own name
// or a wrong one.
func checkVariables(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any) *gqlerror.Error {
	for _, def := range op.VariableDefinitions {
		v, present := vars[def.Variable]
		if !present {
			if def.Type.NonNull && def.DefaultValue == nil {
				return varError(def, nil, fmt.Sprintf("Variable \"$%s\" of required type \"%s\" was not provided.", def.Variable, def.Type))
			}
			continue
		}
		if msg, path := coerce(schema, def.Type, v, nil); msg != "" {
			at := ""
			if len(path) > 0 {
				at = fmt.Sprintf(" at \"%s.%s\"", def.Variable, strings.Join(path, "."))
			}
			return varError(def, path, fmt.Sprintf("Variable \"$%s\" got an invalid value%s; %s", def.Variable, at, msg))
		}
	}
	return nil
}

func varError(def *ast.VariableDefinition, path []string, msg string) *gqlerror.Error {
	p := ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}
	for _, s := range path {
		if i, err := strconv.Atoi(s); err == nil {
			p = append(p, ast.PathIndex(i))
		} else {
			p = append(p, ast.PathName(s))
		}
	}
	e := &gqlerror.Error{Message: msg, Path: p}
	errcode.Set(e, errcode.ValidationFailed)
	return e
}

// coerce checks v against t and returns a message and the path of the
// first violation, or "".
func coerce(schema *ast.Schema, t *ast.Type, v any, path []string) (string, []string) {
	if v == nil {
		if t.NonNull {
			return fmt.Sprintf("Expected non-nullable type \"%s\" not to be null.", t), path
		}
		return "", nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return coerce(schema, t.Elem, v, path)
		}
		for i, item := range list {
			if msg, p := coerce(schema, t.Elem, item, append(path, strconv.Itoa(i))); msg != "" {
				return msg, p
			}
		}
		return "", nil
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return fmt.Sprintf("Unknown type \"%s\".", t.NamedType), path
	}
	switch def.Kind {
	case ast.InputObject:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("Expected type \"%s\" to be an object.", def.Name), path
		}
		for k := range obj {
			if def.Fields.ForName(k) == nil {
				return fmt.Sprintf("Field \"%s\" is not defined by type \"%s\".", k, def.Name), append(path, k)
			}
		}
		for _, f := range def.Fields {
			fv, present := obj[f.Name]
			if !present {
				if f.Type.NonNull && f.DefaultValue == nil {
					return fmt.Sprintf("Field \"%s\" of required type \"%s\" was not provided.", f.Name, f.Type), path
				}
				continue
			}
			if msg, p := coerce(schema, f.Type, fv, append(path, f.Name)); msg != "" {
				return msg, p
			}
		}
		return "", nil
	case ast.Enum:
		s, ok := v.(string)
		if !ok || def.EnumValues.ForName(s) == nil {
			return fmt.Sprintf("Value does not exist in \"%s\" enum.", def.Name), path
		}
		return "", nil
	case ast.Scalar:
		return coerceScalar(def.Name, v), path
	}
	return fmt.Sprintf("Type \"%s\" is not an input type.", def.Name), path
}

func coerceScalar(name string, v any) string {
	switch name {
	case "Int":
		n, ok := v.(json.Number)
		if !ok {
			return "Int cannot represent a non-integer value"
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			f, ferr := n.Float64()
			if ferr != nil || f != math.Trunc(f) {
				return "Int cannot represent a non-integer value"
			}
			i = int64(f)
		}
		if i > math.MaxInt32 || i < math.MinInt32 {
			return "Int cannot represent a non 32-bit signed integer value"
		}
	case "Float":
		if _, ok := v.(json.Number); !ok {
			return "Float cannot represent a non numeric value"
		}
	case "String":
		if _, ok := v.(string); !ok {
			return "String cannot represent a non string value"
		}
	case "Boolean":
		if _, ok := v.(bool); !ok {
			return "Boolean cannot represent a non boolean value"
		}
	case "ID":
		switch x := v.(type) {
		case string:
		case json.Number:
			if _, err := strconv.ParseInt(x.String(), 10, 64); err != nil {
				return "ID cannot represent a non-integer number"
			}
		default:
			return "ID cannot represent a value that is neither a string nor an integer"
		}
	}
	return ""
}
