package expect

import (
	"testing"

	"github.com/bulkload/bulkload/lead"
)

func TestQualify(t *testing.T) {
	tests := []struct {
		name  string
		score int
		code  int
		bid   string
	}{
		{"lowest", 300, 1020, ""},
		{"just below", 599, 1020, ""},
		{"1013 low edge", 600, 1013, "$15.00"},
		{"1013 high edge", 649, 1013, "$15.00"},
		{"1014", 650, 1014, "$22.50"},
		{"1015", 749, 1015, "$30.00"},
		{"1016", 750, 1016, "$37.50"},
		{"1017 low edge", 800, 1017, "$45.00"},
		{"1017 top", 850, 1017, "$45.00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, bid := Qualify(tc.score)
			if code != tc.code || bid != tc.bid {
				t.Errorf("Qualify(%d) = %d, %q, want %d, %q", tc.score, code, bid, tc.code, tc.bid)
			}
		})
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		ssn  string
		want int
	}{
		{"123456789", 300 + 6789%551},
		{"123-45-0000", 300},
		{"123 45 0550", 850},
		{"123450551", 300},
		{"123459999", 300 + 9999%551},
	}
	for _, tc := range tests {
		t.Run(tc.ssn, func(t *testing.T) {
			if got := Score(tc.ssn); got != tc.want {
				t.Errorf("Score(%q) = %d, want %d", tc.ssn, got, tc.want)
			}
		})
	}
}

func TestPredictSequence(t *testing.T) {
	row := func(ssn, email, phone, consent string) *lead.Values {
		var v lead.Values
		v[lead.SocialSecurityNumber] = ssn
		v[lead.Email] = email
		v[lead.HomePhone] = phone
		v[lead.TermsConsent] = consent
		return &v
	}
	// Scores: 0250 -> 550 (1020); 0400 -> 700 (1015); 0500 -> 800 (1017).
	steps := []struct {
		name string
		v    *lead.Values
		want Outcome
	}{
		{"no consent", row("123450500", "a@x.com", "5125550100", "No"), Outcome{ResultCode: 1001}},
		{"no consent is not remembered", row("123450500", "a@x.com", "5125550100", "Yes"), Outcome{1017, "$45.00", true}},
		{"same SSN other format", row("123-45-0500", "b@x.com", "5125550101", "true"), Outcome{ResultCode: 1002}},
		{"low score", row("223450250", "c@x.com", "5125550102", "1"), Outcome{ResultCode: 1020}},
		{"no SSN", row("", "d@x.com", "5125550103", "y"), Outcome{ResultCode: 1020}},
		{"same email and phone", row("323450400", "d@x.com", "+1 (512) 555-0103", "TRUE"), Outcome{ResultCode: 1002}},
		{"same email other phone", row("423450400", "d@x.com", "5125550199", "TRUE"), Outcome{1015, "$30.00", true}},
	}
	p := NewPredictor()
	for _, st := range steps {
		if got := p.Predict(st.v); got != st.want {
			t.Errorf("%s: Predict = %+v, want %+v", st.name, got, st.want)
		}
	}
}
