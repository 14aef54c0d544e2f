package leadsim

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// echoPII writes an SSN and a date of birth the ways a careless service
// echoes them (Options.EchoPII): the SSN with dashes, spaces, dots and
// none; the date month first and day first, with slashes, dots and
// dashes, a 2-digit year, no separators and the month's name. A value the
// simulator cannot split is echoed as sent.
func echoPII(ssn, dob string) string {
	var b strings.Builder
	if d := ssnKey(ssn); len(d) == 9 {
		fmt.Fprintf(&b, "SSN %s-%s-%s (%s %s %s, %s.%s.%s, %s)", d[:3], d[3:5], d[5:], d[:3], d[3:5], d[5:], d[:3], d[3:5], d[5:], d)
	} else if ssn != "" {
		fmt.Fprintf(&b, "SSN %s", ssn)
	}
	if b.Len() > 0 {
		b.WriteString(", ")
	}
	y, errY := strconv.Atoi(dob[:min(4, len(dob))])
	if m, d, ok := monthDay(dob); ok && errY == nil && len(dob) == 10 {
		months := [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
		fmt.Fprintf(&b, "DOB %02d/%02d/%04d (%d/%d/%02d, %s, %02d.%02d.%04d, %04d%02d%02d, %s %d, %04d, %02d-%s-%02d)",
			m, d, y, m, d, y%100, dob, d, m, y, y, m, d, months[m-1], d, y, d, strings.ToUpper(months[m-1][:3]), y%100)
	} else {
		fmt.Fprintf(&b, "DOB %s", dob)
	}
	return b.String()
}

// monthDay reads the month and day of a YYYY-MM-DD date.
func monthDay(dob string) (m, d int, ok bool) {
	if len(dob) != 10 || dob[4] != '-' || dob[7] != '-' {
		return 0, 0, false
	}
	m, err1 := strconv.Atoi(dob[5:7])
	d, err2 := strconv.Atoi(dob[8:10])
	if err1 != nil || err2 != nil || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, false
	}
	return m, d, true
}

// echoCode is an extensions.code carrying the echo too, the way a service
// that builds codes from data would.
func echoCode(code, echo string) string {
	if echo == "" {
		return code
	}
	return code + ":" + strings.NewReplacer(" ", "_", ",", "", "(", "", ")", "").Replace(echo)
}

// echoError adds echo to a GraphQL error's message and code.
func echoError(e *gqlerror.Error, echo string) *gqlerror.Error {
	if echo == "" {
		return e
	}
	out := *e
	out.Message = e.Message + " [" + echo + "]"
	ext := map[string]any{}
	for k, v := range e.Extensions {
		ext[k] = v
	}
	code, _ := ext["code"].(string)
	ext["code"] = echoCode(code, echo)
	out.Extensions = ext
	return &out
}

// faultEcho is the echo of the lead a createLead or submitLead request is
// about, for the body of an injected 500 or 503, or "".
func (s *Server) faultEcho(rc *graphql.OperationContext, op string) string {
	if !s.opts.EchoPII || rc == nil {
		return ""
	}
	switch op {
	case OpCreateLead:
		in, _ := rc.Variables["input"].(map[string]any)
		ssn, _ := in["socialSecurityNumber"].(string)
		dob, _ := in["dateOfBirth"].(string)
		if ssn == "" && dob == "" {
			return ""
		}
		return echoPII(ssn, dob)
	case OpSubmitLead:
		id, _ := rc.Variables["id"].(string)
		return s.store.echoOf(id)
	}
	return ""
}

// faultBody is an injected fault's body, with the lead's echo when there
// is one.
func faultBody(body, echo string) string {
	if echo == "" {
		return body
	}
	var env struct {
		Errors []struct {
			Message    string            `json:"message"`
			Extensions map[string]string `json:"extensions"`
		} `json:"errors"`
	}
	if json.Unmarshal([]byte(body), &env) != nil || len(env.Errors) == 0 {
		return body
	}
	env.Errors[0].Message += " [" + echo + "]"
	env.Errors[0].Extensions["code"] = echoCode(env.Errors[0].Extensions["code"], echo)
	b, err := json.Marshal(env)
	if err != nil {
		return body
	}
	return string(b)
}
