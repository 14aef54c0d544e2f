// Package leadapi is gqlgen's generated server code for leadsim's lead
// endpoint (the schema leadsim/schema.graphqls, configured by
// leadsim/gqlgen.yml): the executable schema and the models. leadsim's
// resolvers implement it. Do not edit generated.go or models_gen.go:
// regenerate them as gqlgen.yml says.
package leadapi
