package mapper

// stateCodes is every code normState accepts, two letters each: the 50
// states, DC, the five inhabited territories (PR, GU, VI, AS, MP) and the
// three military codes (AA, AE, AP). TestStateTables checks that
// stateNames names exactly these codes.
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
// returns the code; names is stateNames' map.
func normState(names map[string]string, s string) (string, string) {
	if code, ok := stateCode(s); ok {
		return code, ""
	}
	var buf [48]byte
	if code, ok := names[string(stateNameKey(&buf, s))]; ok {
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

// stateNames returns a new map from every state name normState accepts,
// as stateNameKey writes it, to its code. New builds it once per Mapper: a
// package-level map would be mutable state.
func stateNames() map[string]string {
	return map[string]string{
		"alabama":                         "AL",
		"alaska":                          "AK",
		"arizona":                         "AZ",
		"arkansas":                        "AR",
		"california":                      "CA",
		"colorado":                        "CO",
		"connecticut":                     "CT",
		"delaware":                        "DE",
		"florida":                         "FL",
		"georgia":                         "GA",
		"hawaii":                          "HI",
		"idaho":                           "ID",
		"illinois":                        "IL",
		"indiana":                         "IN",
		"iowa":                            "IA",
		"kansas":                          "KS",
		"kentucky":                        "KY",
		"louisiana":                       "LA",
		"maine":                           "ME",
		"maryland":                        "MD",
		"massachusetts":                   "MA",
		"michigan":                        "MI",
		"minnesota":                       "MN",
		"mississippi":                     "MS",
		"missouri":                        "MO",
		"montana":                         "MT",
		"nebraska":                        "NE",
		"nevada":                          "NV",
		"new hampshire":                   "NH",
		"new jersey":                      "NJ",
		"new mexico":                      "NM",
		"new york":                        "NY",
		"north carolina":                  "NC",
		"north dakota":                    "ND",
		"ohio":                            "OH",
		"oklahoma":                        "OK",
		"oregon":                          "OR",
		"pennsylvania":                    "PA",
		"rhode island":                    "RI",
		"south carolina":                  "SC",
		"south dakota":                    "SD",
		"tennessee":                       "TN",
		"texas":                           "TX",
		"utah":                            "UT",
		"vermont":                         "VT",
		"virginia":                        "VA",
		"washington":                      "WA",
		"west virginia":                   "WV",
		"wisconsin":                       "WI",
		"wyoming":                         "WY",
		"district of columbia":            "DC",
		"washington dc":                   "DC",
		"washington district of columbia": "DC",
		"puerto rico":                     "PR",
		"guam":                            "GU",
		"virgin islands":                  "VI",
		"us virgin islands":               "VI",
		"united states virgin islands":    "VI",
		"american samoa":                  "AS",
		"northern mariana islands":        "MP",
		"commonwealth of the northern mariana islands": "MP",
		"armed forces americas":                        "AA",
		"armed forces europe":                          "AE",
		"armed forces africa":                          "AE",
		"armed forces middle east":                     "AE",
		"armed forces canada":                          "AE",
		"armed forces pacific":                         "AP",
	}
}
