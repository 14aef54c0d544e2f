// Package pace holds the limiters that pace the calls of a run to the
// Lead Intake Service: the shared rate (AIMD for a fixed --rate, or none
// until a 429; Adaptive for --rate auto) and the limit on calls in flight
// (Concurrency, fixed or --concurrency auto). Its vocabulary is an
// attempt's Outcome, which the caller reads off each attempt's classified
// reply and hands back (Observe, Release); it knows nothing of HTTP
// beyond status codes, and is tested with no HTTP, on a fake clock. The
// theory behind the figures is in docs/design.md.
package pace
