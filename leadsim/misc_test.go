package leadsim

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

func TestReadsAndQueries(t *testing.T) {
	other := Client{ID: "other", Secret: "o", Roles: []string{RoleWrite, RoleRead}, Granted: true}
	s := newSim(t, Options{Clients: []Client{DefaultClient(), other}})
	tok, otherTok := s.defaultToken(t), s.token(t, "other", "o")
	l := s.create(t, tok, applicant("read-1", "121210400"))
	const leadDoc = `query($id: String!) { lead(id: $id) { id resultCode partnerLeadId } }`
	tests := []struct {
		name, path, token, query string
		vars                     map[string]any
		want                     string // substring of the raw answer
	}{
		{"own lead", "/graphql", tok, leadDoc, map[string]any{"id": l.ID}, `"resultCode":1015,"partnerLeadId":"read-1"`},
		{"other partner's lead", "/graphql", otherTok, leadDoc, map[string]any{"id": l.ID}, `{"data":{"lead":null}}`},
		{"introspection", "/graphql", tok, `{ __type(name: "LeadInput") { inputFields { name } } }`, nil, `"trustedformCertificateID"`},
		{"introspection has no leadSourceId", "/graphql", tok, `{ __type(name: "LeadInput") { inputFields { name } } }`, nil, `"coApplicant"`},
		{"named operation of two", "/graphql", tok, `query A { lead(id: "x") { id } } query B { __typename }`, nil, `"lead":null`},
		{"debt core schema only", "/debt-core/graphql", tok, `{ __schema { queryType { name } } }`, nil, `"Query"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := map[string]any{"query": tc.query, "variables": tc.vars}
			if tc.name == "named operation of two" {
				body["operationName"] = "A"
			}
			r := s.postJSON(t, tc.path, tc.token, body)
			if r.status != http.StatusOK || !strings.Contains(r.raw, tc.want) {
				t.Errorf("%s = %d %s, want 200 containing %s", tc.name, r.status, r.raw, tc.want)
			}
			if strings.Contains(r.raw, "leadSourceId") {
				t.Errorf("%s mentions leadSourceId: %s", tc.name, r.raw)
			}
		})
	}
	if got := s.Stats().Requests[OpLead][200]; got != 3 {
		t.Errorf("Requests[lead][200] = %d, want 3", got)
	}
}

func TestQueryCacheEvicts(t *testing.T) {
	c := newQueryCache(2)
	ctx := context.Background()
	docs := make([]*ast.QueryDocument, 3)
	for i := range docs {
		docs[i] = &ast.QueryDocument{}
		c.Add(ctx, strconv.Itoa(i), docs[i])
		if i == 1 {
			c.Get(ctx, "0") // 0 is now the most recent, so 1 goes next
		}
	}
	tests := []struct {
		key  string
		want bool
	}{{"0", true}, {"1", false}, {"2", true}}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			if _, ok := c.Get(ctx, tc.key); ok != tc.want {
				t.Errorf("Get(%q) found = %v, want %v", tc.key, ok, tc.want)
			}
		})
	}
}

// TestStatsCreatesAnswered: the createLead calls answered are the sum of
// the result codes' counts, whatever the codes.
func TestStatsCreatesAnswered(t *testing.T) {
	for _, tc := range []struct {
		codes map[int]int
		want  int
	}{
		{nil, 0},
		{map[int]int{1013: 2}, 2},
		{map[int]int{1013: 2, 1020: 5, 1017: 1}, 8},
	} {
		if got := (Stats{ResultCodes: tc.codes}).CreatesAnswered(); got != tc.want {
			t.Errorf("CreatesAnswered of %v = %d, want %d", tc.codes, got, tc.want)
		}
	}
}
