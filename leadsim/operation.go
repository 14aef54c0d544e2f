package leadsim

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// operation turns a request into the OperationContext gqlgen's executor
// runs. It does what executor.CreateOperationContext does (parse, validate
// with gqlgen's rules, pick the operation, coerce variables), with two
// differences: variables are coerced by checkVariables, which follows the
// GraphQL specification where gqlparser is lax, and gqlparser's
// reflection-based coercion, a fifth of the cost of a createLead, is not
// paid. Parsed documents come from the endpoint's LRU cache. On an error the
// returned context still holds what was parsed, so the caller can name the
// operation.
func (e *endpoint) operation(params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	rc := &graphql.OperationContext{
		RawQuery:               params.Query,
		OperationName:          params.OperationName,
		Headers:                params.Headers,
		Extensions:             params.Extensions,
		DisableIntrospection:   false, // clients and tools may read the schemas, as on most GraphQL servers
		RecoverFunc:            e.recoverFunc,
		ResolverMiddleware:     passField,
		RootResolverMiddleware: passRootField,
	}
	doc, errs := e.parse(params.Query)
	if errs != nil {
		return rc, errs
	}
	rc.Doc = doc
	rc.Operation = doc.Operations.ForName(params.OperationName)
	if rc.Operation == nil {
		err := gqlerror.Errorf("operation %s not found", params.OperationName)
		errcode.Set(err, errcode.ValidationFailed)
		return rc, gqlerror.List{err}
	}
	if err := checkVariables(e.schema, rc.Operation, params.Variables); err != nil {
		return rc, gqlerror.List{err}
	}
	vars := params.Variables
	for _, def := range rc.Operation.VariableDefinitions {
		if _, ok := vars[def.Variable]; ok || def.DefaultValue == nil {
			continue
		}
		v, err := def.DefaultValue.Value(nil)
		if err != nil {
			gerr := gqlerror.WrapPath(ast.Path{ast.PathName("variable"), ast.PathName(def.Variable)}, err)
			errcode.Set(gerr, errcode.ValidationFailed)
			return rc, gqlerror.List{gerr}
		}
		if vars == nil {
			vars = map[string]any{}
		}
		vars[def.Variable] = v
	}
	rc.Variables = vars
	return rc, nil
}

// parse returns the parsed and validated document of query, from the cache
// when it was seen before.
func (e *endpoint) parse(query string) (*ast.QueryDocument, gqlerror.List) {
	if doc, ok := e.cache.Get(context.Background(), query); ok {
		return doc, nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		gerr, ok := err.(*gqlerror.Error)
		if !ok {
			gerr = gqlerror.Wrap(err)
		}
		errcode.Set(gerr, errcode.ParseFailed)
		return nil, gqlerror.List{gerr}
	}
	if len(doc.Operations) == 0 {
		gerr := gqlerror.Errorf("no operation provided")
		errcode.Set(gerr, errcode.ValidationFailed)
		return nil, gqlerror.List{gerr}
	}
	// The rules gqlgen's executor uses, with suggestions on.
	r := rules.NewDefaultRules()
	r.RemoveRule("FieldsOnCorrectTypeWithoutSuggestions")
	r.AddRule(rules.FieldsOnCorrectTypeRule.Name, rules.FieldsOnCorrectTypeRule.RuleFunc)
	if errs := validator.ValidateWithRules(e.schema, doc, r); len(errs) != 0 {
		for _, ge := range errs {
			errcode.Set(ge, errcode.ValidationFailed)
		}
		return nil, errs
	}
	e.cache.Add(context.Background(), query, doc)
	return doc, nil
}

func passField(ctx context.Context, next graphql.Resolver) (any, error) { return next(ctx) }

func passRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	return next(ctx)
}
