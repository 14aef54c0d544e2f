package completion

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestScriptsNameEveryCommandAndFlag: each shell's script offers every
// command word, flag and fixed value it is given, with help text that
// cannot break the script's own quoting. (cmd/bulkload's tests run the
// bash script against the real command list.)
func TestScriptsNameEveryCommandAndFlag(t *testing.T) {
	cmds := []Command{
		{Words: []string{"upload"}, Summary: "upload FILE", Flags: []Flag{
			{Name: "rate", Help: "calls per second: 'auto' [or] a number", Choices: []string{"auto"}},
			{Name: "delimiter", Help: `CSV delimiter \ one of`, Choices: []string{",", ";", "|", "tab"}},
			{Name: "resume", Help: "continue", IsBool: true},
		}},
		{Words: []string{"auth", "check"}, Summary: "request a token", NoFiles: true},
		{Words: []string{"completion"}, Summary: "print a script", Args: []string{"bash", "zsh", "fish"}},
	}
	for _, sh := range []struct {
		name  string
		write func(io.Writer, []Command)
	}{{"bash", Bash}, {"zsh", Zsh}, {"fish", Fish}} {
		t.Run(sh.name, func(t *testing.T) {
			var b bytes.Buffer
			sh.write(&b, cmds)
			out := b.String()
			for _, w := range []string{"upload", "auth", "check", "completion", "rate", "delimiter", "resume", "tab", "zsh", "fish"} {
				if !strings.Contains(out, w) {
					t.Errorf("%s script lacks %q", sh.name, w)
				}
			}
		})
	}
}

func TestQuoting(t *testing.T) {
	cases := []struct {
		fn       func(string) string
		in, want string
	}{
		{zshQuote, "it's [a]: b\\c", "its (a) - bc"},
		{fishQuote, `it's a\b`, `'it\'s a\\b'`},
	}
	for _, tc := range cases {
		if got := tc.fn(tc.in); got != tc.want {
			t.Errorf("quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := shellWords([]string{",", "tab", "|"}); got[0] != `\,` || got[1] != "tab" || got[2] != `\|` {
		t.Errorf("shellWords = %q, want the separators escaped", got)
	}
	if got := FirstSentence("Calls per second. Retries included."); got != "Calls per second" {
		t.Errorf("FirstSentence = %q", got)
	}
}
