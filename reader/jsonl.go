package reader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/bulkload/bulkload/lead"
)

// jsonlSource reads one JSON object a line through encoding/json.
type jsonlSource struct {
	r         *Reader
	br        *bufio.Reader
	res       *resolver
	keys      map[string]colRes // resolution cache, at most maxKeyCache keys
	long      []byte            // a line longer than the read buffer, assembled
	checkUTF8 bool
	named     [lead.NumFields]bool // the fields whose first key setHeader has
	row       int
	line      int // line number of the last line read
	failed    error
}

func newJSONLSource(r *Reader, in io.Reader, res *resolver, checkUTF8 bool) *jsonlSource {
	return &jsonlSource{r: r, br: bufio.NewReaderSize(in, bufSize), res: res,
		keys: make(map[string]colRes), checkUTF8: checkUTF8}
}

// readLine returns the next line without its line end. A line longer than
// maxRecord is skipped to its end and reported as tooLong, without keeping
// more than maxRecord bytes of it.
func (s *jsonlSource) readLine() (line []byte, tooLong bool, err error) {
	s.long = s.long[:0]
	for {
		frag, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !tooLong {
				if len(s.long)+len(frag) > maxRecord {
					tooLong = true
					s.long = s.long[:0]
				} else {
					s.long = append(s.long, frag...)
				}
			}
			continue
		}
		if tooLong {
			return nil, true, ignoreEOF(err)
		}
		if len(s.long) > 0 {
			if len(s.long)+len(frag) > maxRecord+2 {
				return nil, true, ignoreEOF(err)
			}
			s.long = append(s.long, frag...)
			frag = s.long
		}
		if err == io.EOF && len(frag) == 0 {
			return nil, false, io.EOF
		}
		if len(frag) > maxRecord+2 {
			return nil, true, ignoreEOF(err)
		}
		return trimLineEnd(frag), false, ignoreEOF(err)
	}
}

// ignoreEOF drops io.EOF after a last line without a line end: the line is
// returned now and the next call reports the end.
func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// nextRaw is next: a JSONL record is decoded as it is read.
func (s *jsonlSource) nextRaw() (Record, []string, error) {
	rec, err := s.next()
	return rec, nil, err
}

func (s *jsonlSource) next() (Record, error) {
	if s.failed != nil {
		return Record{}, s.failed
	}
	for {
		line, tooLong, err := s.readLine()
		if errors.Is(err, io.EOF) {
			return Record{}, io.EOF
		}
		if err != nil {
			s.failed = fmt.Errorf("read %s after line %d: %w", s.r.name, s.line, err)
			return Record{}, s.failed
		}
		s.line++
		if !tooLong && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		s.row++
		rec := Record{Row: s.row, Line: s.line, Raw: line}
		switch {
		case tooLong:
			rec.Err = rowError(s.row, s.line, fmt.Sprintf("line longer than %d bytes", maxRecord))
		case s.checkUTF8 && !utf8.Valid(line):
			rec.Err = rowError(s.row, s.line, s.r.notUTF8)
		default:
			if rule, col := s.parse(line, &rec.Values); rule != "" {
				rec.Values = lead.Values{}
				rec.Err = rowError(s.row, s.line, rule)
				if col > 0 {
					rec.Err.Line, rec.Err.Column = s.line, col
				}
			} else if rec.Values == (lead.Values{}) {
				rec.Err = rowError(s.row, s.line, "no known key has a value")
			}
		}
		return rec, nil
	}
}

// parse reads one line's object into v. Strings are taken as they are,
// numbers as their literal text, booleans as "true"/"false" and null as "".
// A known key holding an object or an array makes the row malformed; an
// unknown key is reported once through Unknown whatever it holds.
// encoding/json validates the line (json.Valid) and decodes escaped
// strings; the walk over the validated object is done here, because
// json.Decoder.Token costs hundreds of allocations a line.
func (s *jsonlSource) parse(line []byte, v *lead.Values) (rule string, column int) {
	if !json.Valid(line) {
		return invalidJSON(line)
	}
	p := skipSpace(line, 0)
	if line[p] != '{' {
		return ruleNotObject, 0
	}
	var set [lead.NumFields]bool
	p = skipSpace(line, p+1)
	for line[p] != '}' {
		keyEnd := stringEnd(line, p)
		rawKey := line[p:keyEnd]
		p = skipSpace(line, keyEnd)
		p = skipSpace(line, p+1) // the colon
		res := s.resolve(rawKey)
		var text string
		switch c := line[p]; {
		case c == '"':
			end := stringEnd(line, p)
			text = jsonString(line[p:end])
			p = end
		case (c == '{' || c == '[') && res.kind != colField:
			p = containerEnd(line, p) // an unknown or ignored key: its value does not matter
		case c == '{' || c == '[':
			kind := "an object"
			if c == '[' {
				kind = "an array"
			}
			return fmt.Sprintf("key %q holds %s; a known key must hold a string, number, true, false or null", shortName(jsonString(rawKey)), kind), 0
		case c == 't':
			text, p = "true", p+4
		case c == 'f':
			text, p = "false", p+5
		case c == 'n':
			p += 4
		default: // a number: its literal text
			end := p
			for end < len(line) && bytes.IndexByte([]byte("0123456789+-.eE"), line[end]) >= 0 {
				end++
			}
			text, p = string(line[p:end]), end
		}
		switch res.kind {
		case colUnknown:
			if key := jsonString(rawKey); looksLikeData(key) {
				s.r.unknown.add("(a key: name withheld, it looks like data)")
			} else {
				s.r.unknown.add(shortName(key))
			}
		case colField:
			if set[res.field] {
				s.r.unknown.add(duplicateName(shortName(jsonString(rawKey)), res.field))
				break
			}
			set[res.field] = true
			v[res.field] = text
			if !s.named[res.field] {
				s.named[res.field] = true
				s.r.setHeader(res.field, shortName(jsonString(rawKey)))
			}
		}
		p = skipSpace(line, p)
		if line[p] == ',' {
			p = skipSpace(line, p+1)
		}
	}
	return "", 0
}

// skipSpace returns the offset of the first non-space byte at or after p.
func skipSpace(b []byte, p int) int {
	for p < len(b) && (b[p] == ' ' || b[p] == '\t' || b[p] == '\r' || b[p] == '\n') {
		p++
	}
	return p
}

// stringEnd returns the offset just after the JSON string starting at p.
func stringEnd(b []byte, p int) int {
	for i := p + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// containerEnd returns the offset just after the object or array starting
// at p in a validated line.
func containerEnd(b []byte, p int) int {
	depth := 0
	for i := p; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(b)
}

// jsonString decodes a validated JSON string literal, quotes included.
func jsonString(lit []byte) string {
	if bytes.IndexByte(lit, '\\') < 0 {
		return string(lit[1 : len(lit)-1])
	}
	var out string
	if err := json.Unmarshal(lit, &out); err != nil {
		return string(lit[1 : len(lit)-1])
	}
	return out
}

// ruleNotObject is the rule of a JSONL line that is JSON but not an object.
const ruleNotObject = "the line is not a JSON object"

// invalidJSON says why a line is not valid JSON, and at which byte column
// (0 when no column applies), without quoting it: encoding/json's own
// message quotes the offending character, which may be cell content.
func invalidJSON(line []byte) (rule string, column int) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return notJSON(err)
	}
	if !bytes.HasPrefix(first, []byte{'{'}) {
		return ruleNotObject, 0
	}
	return "text after the JSON object; put one object on each line", skipSpace(line, int(dec.InputOffset())) + 1
}

// resolve resolves a key given as its JSON string literal, through a cache
// keyed by the literal (the lookup does not allocate).
func (s *jsonlSource) resolve(rawKey []byte) colRes {
	if res, ok := s.keys[string(rawKey)]; ok {
		return res
	}
	res := s.res.resolve(jsonString(rawKey))
	if len(s.keys) < maxKeyCache {
		s.keys[string(rawKey)] = res
	}
	return res
}

// notJSON describes a JSON syntax error by its byte column only:
// encoding/json's own message quotes the offending character, which may be
// cell content.
func notJSON(err error) (rule string, column int) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "not valid JSON; check the line is one JSON object", int(se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "not valid JSON: the object is not closed", 0
	}
	return "not valid JSON", 0
}
