// Package debtapi is gqlgen's generated server code for leadsim's debt core
// endpoint (the schema leadsim/debtcore.graphqls, configured by
// leadsim/debtcore.gqlgen.yml): the executable schema and the models.
// leadsim's resolvers implement it. Do not edit generated.go or
// models_gen.go: regenerate them as that configuration file says.
package debtapi
