package main

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		comma rune
		want  int
	}{
		{"empty", "", ',', 0},
		{"header only", "a,b\n", ',', 0},
		{"two rows", "a,b\n1,2\n3,4\n", ',', 2},
		{"quoted newline", "a,b\n\"x\ny\",2\n3,4\n", ',', 2},
		{"semicolon", "a;b\n1;2\n", ';', 1},
		{"bare quote counted", "a,b\n1,x\"y\n3,4\n", ',', 2},
		{"blank lines skipped", "a,b\n\n1,2\n\n", ',', 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := count(strings.NewReader(tc.in), tc.comma)
			if err != nil || got != tc.want {
				t.Errorf("count(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
			}
		})
	}
}
