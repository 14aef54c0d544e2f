package samples

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/bulkload/bulkload/bench/expect"
	"github.com/bulkload/bulkload/bench/synth"
	"github.com/bulkload/bulkload/lead"
)

var update = flag.Bool("update", false, "rewrite the sample files from the generators")

// The clean sample's outcome plan: six leads for each qualified code, 15
// scoring below 600, 5 without an SSN: 50 leads.
const (
	cleanSeed      = 20261122
	perQualified   = 6
	lowScore       = 15
	withoutSSN     = 5
	cleanRows      = 5*perQualified + lowScore + withoutSSN
	cleanPrefix    = "ACME-"
	noSSNTarget    = -1
	lowScoreTarget = 0
)

// cleanTargets returns, per row, the planned outcome: a qualified code
// 1013-1017, lowScoreTarget or noSSNTarget, in a shuffled but fixed order.
func cleanTargets() []int {
	var t []int
	for code := lead.CodeQualifiedMin; code <= lead.CodeQualifiedMax; code++ {
		for range perQualified {
			t = append(t, code)
		}
	}
	for range lowScore {
		t = append(t, lowScoreTarget)
	}
	for range withoutSSN {
		t = append(t, noSSNTarget)
	}
	r := rand.New(rand.NewPCG(cleanSeed, 1))
	r.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
	return t
}

// cleanLeads returns the 50 clean leads, every one valid, with SSNs chosen
// so that each gets its planned outcome.
func cleanLeads(t *testing.T) []lead.Values {
	g, err := synth.New(synth.Options{Seed: cleanSeed, Style: synth.Clean, LeadIDPrefix: cleanPrefix})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(cleanSeed, 2))
	out := make([]lead.Values, 0, cleanRows)
	for i, target := range cleanTargets() {
		var v lead.Values
		if f := g.Row(i, &v); f != synth.NoFlaw {
			t.Fatalf("clean row %d has flaw %v", i+1, f)
		}
		switch target {
		case noSSNTarget:
			v[lead.SocialSecurityNumber] = ""
		case lowScoreTarget:
			v[lead.SocialSecurityNumber] = synth.SSNFor(i, synth.MinScore+r.IntN(synth.QualifyingScore-synth.MinScore))
		default:
			band := target - lead.CodeQualifiedMin
			v[lead.SocialSecurityNumber] = synth.SSNFor(i, synth.QualifyingScore+50*band+r.IntN(50))
		}
		out = append(out, v)
	}
	return out
}

func leadsCSV(rows []lead.Values) []byte {
	var b bytes.Buffer
	w := synth.NewCSVWriter(&b)
	_ = w.WriteHeader()
	for i := range rows {
		_ = w.Write(&rows[i])
	}
	_ = w.Flush()
	return b.Bytes()
}

func leadsJSONL(rows []lead.Values) []byte {
	var b bytes.Buffer
	w := synth.NewJSONLWriter(&b)
	for i := range rows {
		_ = w.Write(&rows[i])
	}
	_ = w.Flush()
	return b.Bytes()
}

// leadsExpected predicts each row's outcome from the simulator's rules.
func leadsExpected(rows []lead.Values) []byte {
	var b bytes.Buffer
	b.WriteString("row,leadId,resultCode,bidValue,submitted\n")
	p := expect.NewPredictor()
	for i := range rows {
		o := p.Predict(&rows[i])
		b.WriteString(strconv.Itoa(i + 1))
		b.WriteByte(',')
		b.WriteString(rows[i][lead.LeadID])
		b.WriteByte(',')
		b.WriteString(strconv.Itoa(o.ResultCode))
		b.WriteByte(',')
		b.WriteString(o.BidValue)
		b.WriteByte(',')
		b.WriteString(strconv.FormatBool(o.Submitted))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// golden compares want with the file name, or writes it with -update.
func golden(t *testing.T, name string, want []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(name, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./samples -update)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from its generator: edit samples/*_test.go and run go test ./samples -update, never the file", name)
	}
}

func TestCleanSamples(t *testing.T) {
	rows := cleanLeads(t)
	golden(t, "leads.csv", leadsCSV(rows))
	golden(t, "leads.jsonl", leadsJSONL(rows))
	golden(t, "leads.expected.csv", leadsExpected(rows))
}
