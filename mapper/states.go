package mapper

// stateCodes is every code normState accepts, two letters each: the 50
// states, DC, the five inhabited territories (PR, GU, VI, AS, MP) and the
// three military codes (AA, AE, AP). Generated with the names below; keep
// them in step.
const stateCodes = "ALAKAZARCACOCTDEFLGAHIIDILINIAKSKYLAMEMDMAMIMNMSMOMTNENVNHNJNMNYNCNDOHOKORPARISCSDTNTXUTVTVAWAWVWIWYDCPRGUVIASMPAAAEAP"

// stateCode returns the code for a two-letter value in any case.
func stateCode(s string) (string, bool) {
	if len(s) != 2 {
		return "", false
	}
	a, b := upper(s[0]), upper(s[1])
	for i := 0; i < len(stateCodes); i += 2 {
		if stateCodes[i] == a && stateCodes[i+1] == b {
			return stateCodes[i : i+2], true
		}
	}
	return "", false
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// normState accepts a code or a full name in any case and spacing and
// returns the code.
func normState(s string) (string, string) {
	if code, ok := stateCode(s); ok {
		return code, ""
	}
	var buf [48]byte
	if code, ok := stateByName(stateNameKey(&buf, s)); ok {
		return code, ""
	}
	return "", ruleState
}

// stateNameKey lower-cases s, drops dots and turns runs of spaces, hyphens
// and commas into one space: "  New   York " and "u.s. virgin islands" become
// "new york" and "us virgin islands". It returns nil for anything that cannot
// be a state name.
func stateNameKey(buf *[48]byte, s string) []byte {
	n := 0
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
			if space && n > 0 {
				if n == len(buf) {
					return nil
				}
				buf[n] = ' '
				n++
			}
			space = false
			if n == len(buf) {
				return nil
			}
			buf[n] = c | 0x20
			n++
		case c == '.':
		case c == ' ' || c == '\t' || c == '-' || c == ',':
			space = true
		default:
			return nil
		}
	}
	return buf[:n]
}

// stateByName returns the code of a state name made by stateNameKey.
func stateByName(key []byte) (string, bool) {
	switch string(key) {
	case "alabama":
		return "AL", true
	case "alaska":
		return "AK", true
	case "arizona":
		return "AZ", true
	case "arkansas":
		return "AR", true
	case "california":
		return "CA", true
	case "colorado":
		return "CO", true
	case "connecticut":
		return "CT", true
	case "delaware":
		return "DE", true
	case "florida":
		return "FL", true
	case "georgia":
		return "GA", true
	case "hawaii":
		return "HI", true
	case "idaho":
		return "ID", true
	case "illinois":
		return "IL", true
	case "indiana":
		return "IN", true
	case "iowa":
		return "IA", true
	case "kansas":
		return "KS", true
	case "kentucky":
		return "KY", true
	case "louisiana":
		return "LA", true
	case "maine":
		return "ME", true
	case "maryland":
		return "MD", true
	case "massachusetts":
		return "MA", true
	case "michigan":
		return "MI", true
	case "minnesota":
		return "MN", true
	case "mississippi":
		return "MS", true
	case "missouri":
		return "MO", true
	case "montana":
		return "MT", true
	case "nebraska":
		return "NE", true
	case "nevada":
		return "NV", true
	case "new hampshire":
		return "NH", true
	case "new jersey":
		return "NJ", true
	case "new mexico":
		return "NM", true
	case "new york":
		return "NY", true
	case "north carolina":
		return "NC", true
	case "north dakota":
		return "ND", true
	case "ohio":
		return "OH", true
	case "oklahoma":
		return "OK", true
	case "oregon":
		return "OR", true
	case "pennsylvania":
		return "PA", true
	case "rhode island":
		return "RI", true
	case "south carolina":
		return "SC", true
	case "south dakota":
		return "SD", true
	case "tennessee":
		return "TN", true
	case "texas":
		return "TX", true
	case "utah":
		return "UT", true
	case "vermont":
		return "VT", true
	case "virginia":
		return "VA", true
	case "washington":
		return "WA", true
	case "west virginia":
		return "WV", true
	case "wisconsin":
		return "WI", true
	case "wyoming":
		return "WY", true
	case "district of columbia", "washington dc", "washington district of columbia":
		return "DC", true
	case "puerto rico":
		return "PR", true
	case "guam":
		return "GU", true
	case "virgin islands", "us virgin islands", "united states virgin islands":
		return "VI", true
	case "american samoa":
		return "AS", true
	case "northern mariana islands", "commonwealth of the northern mariana islands":
		return "MP", true
	case "armed forces americas":
		return "AA", true
	case "armed forces europe", "armed forces africa", "armed forces middle east", "armed forces canada":
		return "AE", true
	case "armed forces pacific":
		return "AP", true
	}
	return "", false
}
