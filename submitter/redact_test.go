package submitter

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/bulkload/bulkload/lead"
	"github.com/bulkload/bulkload/redact"
)

func TestRedactCallError(t *testing.T) {
	cause := fmt.Errorf("malformed status %q: %w", "SSN 123-45-6789", context.Canceled)
	ce := &CallError{Op: "submitLead", Code: "E_07/07/1977", Message: "[E] lead 123 45 6789",
		Errors: []GraphQLError{{Message: "dob July 7, 1977", Code: "X987654321"}}, Err: cause}
	redactCallError(redact.New(lead.Input{SocialSecurityNumber: "123456789", DateOfBirth: "1977-07-07", LeadID: "L-100"}), ce)
	got := fmt.Sprintf("%s|%s|%s|%s|%s", ce.Code, ce.Message, ce.Errors[0].Message, ce.Errors[0].Code, ce.Err)
	want := `E_[REDACTED]|[E] lead [REDACTED]|dob [REDACTED]|X[REDACTED]|malformed status "SSN [REDACTED]": context canceled`
	if got != want {
		t.Errorf("redactCallError = %s, want %s", got, want)
	}
	if !errors.Is(ce, context.Canceled) {
		t.Errorf("redacted cause no longer unwraps to context.Canceled")
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
