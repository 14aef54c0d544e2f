package leadsim

import (
	"maps"
	"sync"
)

// Operation names of Stats.Requests.
const (
	OpToken        = "token"
	OpCreateLead   = "createLead"
	OpSubmitLead   = "submitLead"
	OpLead         = "lead"
	OpCreditReport = "creditReport"
	OpInvalid      = "invalid" // unreadable body, unparseable document, unknown operation
)

// Rejection kinds of Stats.Rejections.
const (
	RejectUnauthenticated      = "unauthenticated"
	RejectForbidden            = "forbidden"
	RejectRateLimited          = "rate_limited"
	RejectFault503             = "fault_503"
	RejectFault500             = "fault_500"
	RejectDropped              = "dropped"
	RejectProxyReset           = "proxy_reset" // processed, then answered by a proxy (Options.ProxyReset)
	RejectBodyTooLarge         = "body_too_large"
	RejectBadRequest           = "bad_request" // body is not a JSON GraphQL request, or wrong method
	RejectInvalidClient        = "invalid_client"
	RejectInvalidScope         = "invalid_scope"
	RejectUnauthorizedClient   = "unauthorized_client"
	RejectUnsupportedGrantType = "unsupported_grant_type"
	RejectInvalidRequest       = "invalid_request"
	RejectTokenFault503        = "token_fault_503"
	RejectTokenOutage          = "token_outage_503" // a token request in Options.TokenOutage
	RejectOutage               = "outage_502"       // a GraphQL request in Options.Outage
	RejectFirstAnswer          = "first_answer"     // one of the first GraphQL requests (Options.FirstAnswers)
	RejectHung                 = "hung"             // a request held by Options.HangAfter (counted when held)
	RejectGraphQLValidation    = "graphql_validation"
	RejectSubmitRefused        = "submit_refused"
	RejectBadUserInput         = "bad_user_input" // createLead input breaks a format of the spec's section 8; no lead is created
	RejectShed                 = "shed"           // the capacity's queue was full (Options.QueueLimit): 503
)

// Stats is a snapshot of the simulator's counters, for tests and for
// GET /_sim/stats. Server.Stats returns a deep copy the caller owns.
type Stats struct {
	// Requests counts HTTP answers by operation (OpToken, OpCreateLead, ...,
	// the first root field of the GraphQL document) and HTTP status. A
	// dropped connection counts under status 0.
	Requests     map[string]map[int]int `json:"requests"`
	TokensIssued int                    `json:"tokensIssued"`
	// CreateCalls counts createLead calls that reached the resolver, per
	// input leadId ("" for leads without one), including calls whose
	// connection was then dropped and calls refused as BAD_USER_INPUT: a
	// value above 1 means a lead was sent more than once.
	CreateCalls     map[string]int `json:"createCalls"`
	LeadsCreated    int            `json:"leadsCreated"`
	Submissions     int            `json:"submissions"` // submitLead successes + automatic submissions
	AutoSubmissions int            `json:"autoSubmissions"`
	Rejections      map[string]int `json:"rejections"`  // kind (Reject*) -> count
	ResultCodes     map[int]int    `json:"resultCodes"` // createLead results by code
	// Capacity is the capacity gate's counters (Options.Capacity): peak
	// in flight, requests shed, queue wait and service time.
	Capacity CapacityStats `json:"capacity"`
}

// CreatesAnswered is the number of createLead calls the service processed
// and answered with a result code: the sum of ResultCodes.
func (s Stats) CreatesAnswered() int {
	n := 0
	for _, c := range s.ResultCodes {
		n += c
	}
	return n
}

// counters holds Stats behind its own mutex, apart from the lead store, so
// that counting a request never waits on the workflow.
type counters struct {
	mu sync.Mutex
	st Stats
}

func newCounters() *counters {
	return &counters{st: Stats{
		Requests:    map[string]map[int]int{},
		CreateCalls: map[string]int{},
		Rejections:  map[string]int{},
		ResultCodes: map[int]int{},
	}}
}

func (c *counters) request(op string, status int) {
	c.mu.Lock()
	m := c.st.Requests[op]
	if m == nil {
		m = map[int]int{}
		c.st.Requests[op] = m
	}
	m[status]++
	c.mu.Unlock()
}

func (c *counters) reject(kind string) {
	c.mu.Lock()
	c.st.Rejections[kind]++
	c.mu.Unlock()
}

func (c *counters) tokenIssued() {
	c.mu.Lock()
	c.st.TokensIssued++
	c.mu.Unlock()
}

func (c *counters) created(leadID string, code int, autoSubmitted bool) {
	c.mu.Lock()
	c.st.CreateCalls[leadID]++
	c.st.LeadsCreated++
	c.st.ResultCodes[code]++
	if autoSubmitted {
		c.st.Submissions++
		c.st.AutoSubmissions++
	}
	c.mu.Unlock()
}

// refused counts a createLead call refused as BAD_USER_INPUT: a call, but
// no lead.
func (c *counters) refused(leadID string) {
	c.mu.Lock()
	c.st.CreateCalls[leadID]++
	c.st.Rejections[RejectBadUserInput]++
	c.mu.Unlock()
}

func (c *counters) submitted() {
	c.mu.Lock()
	c.st.Submissions++
	c.mu.Unlock()
}

func (c *counters) snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.st
	s.Requests = c.requestsLocked()
	s.CreateCalls = maps.Clone(c.st.CreateCalls)
	s.Rejections = maps.Clone(c.st.Rejections)
	s.ResultCodes = maps.Clone(c.st.ResultCodes)
	return s
}

// requests is a copy of Stats.Requests alone: cheap enough to poll many
// times a second while a million leads' CreateCalls are counted.
func (c *counters) requests() map[string]map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.requestsLocked()
}

func (c *counters) requestsLocked() map[string]map[int]int {
	out := make(map[string]map[int]int, len(c.st.Requests))
	for op, m := range c.st.Requests {
		out[op] = maps.Clone(m)
	}
	return out
}
