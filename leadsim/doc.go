// Package leadsim is the simulated Lead Intake Service: a faithful local
// stand-in for the whole platform of the interface spec (identity provider,
// lead endpoint, debt core endpoint), served by one http.Handler. It is the
// embedded service behind `bulkload upload --simulate`, the server of every
// end-to-end test and benchmark, and `bulkload sim`. It imports none of the
// client packages.
//
// The GraphQL endpoints are served by gqlgen from schema.graphqls and
// debtcore.graphqls (generated code under graph/, committed). Every request
// needs a bearer token from the simulated identity provider; a missing,
// forged, expired or revoked token is answered HTTP 401 with
//
//	{"errors":[{"message":"Unauthorized","extensions":{"code":"UNAUTHENTICATED"}}]}
//
// createLead first checks the formats of the spec's section 8 (dateOfBirth
// YYYY-MM-DD and a real date, phones 10 digits, SSN 9 digits, zip 5 digits,
// state two letters A-Z); a violation is a GraphQL error per field with
// extensions.code BAD_USER_INPUT in a 200 answer, naming the field and rule
// but never the value, and no lead is created. Otherwise it runs a
// deterministic workflow, evaluated in order:
//
//  1. termsConsent not true: 1001, "Terms consent not given; lead not processed".
//  2. Same SSN, or same email and homePhone, as an earlier processed lead of
//     any partner: 1002, "Duplicate of lead <earlier id>".
//  3. No SSN: 1020, "Processing complete: no SSN, credit report not pulled; not qualified".
//  4. Credit pull, score = 300 + (last four SSN digits mod 551); a credit
//     report is stored. Score below 600: 1020, "Processing complete: credit
//     score below 600; not qualified".
//  5. Qualified: 1013 + min(4, (score-600)/50), bid $15.00, $22.50, $30.00,
//     $37.50 or $45.00; note "Qualified; awaiting submission", or for an
//     AutoSubmit partner "Qualified; submitted automatically".
//
// RULES.md states the rules in full, with submitLead's refusals; README.md
// lists every assumption where the spec says "not shown".
//
// Realism knobs of Options (latency, rate limit, faults, outages of the
// identity provider or the lead endpoint, a hang, key rotation, body limit)
// are all off by default. Counters are read with Server.Stats or
// GET /_sim/stats. An administrator's acts are methods and endpoints:
// RotateKey (POST /_sim/rotate-key) and GrantRoles (POST /_sim/grant), which
// changes a client's roles for the tokens issued after, and Heal (POST
// /_sim/heal), which ends a hang.
package leadsim
