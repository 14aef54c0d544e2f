package synth

// city is a real US city with its state and the first ZIP code of its range.
type city struct {
	city, state, stateName string
	zip                    int
}

// tables holds the word lists rows are drawn from. It is built once per
// Generator (the house rules allow no package-level variables) and never
// changed afterwards.
type tables struct {
	firstNames, lastNames, streets, units, campaigns, domains []string
	residenceLabels, incomeLabels, purposeLabels              []string
	trueWords, falseWords, badStates                          []string
	homeAreaCodes, cellAreaCodes                              []int
	cities                                                    []city
}

func newTables() *tables {
	return &tables{
		firstNames: []string{
			"James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
			"David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
			"Thomas", "Sarah", "Christopher", "Karen", "Charles", "Lisa", "Daniel", "Nancy",
			"Matthew", "Betty", "Anthony", "Sandra", "Mark", "Margaret", "Donald", "Ashley",
			"Steven", "Kimberly", "Andrew", "Emily", "Paul", "Donna", "Joshua", "Michelle",
			"Kenneth", "Carol", "Kevin", "Amanda", "Brian", "Melissa", "Timothy", "Deborah",
			"Ronald", "Stephanie", "Jose", "Maria", "Luis", "Ana", "Carlos", "Rosa",
			"Tyrone", "Keisha", "Darnell", "Latoya", "Wei", "Mei", "Hiroshi", "Priya",
			"Raj", "Fatima", "Omar", "Aaliyah", "DeShawn", "Mary-Kate", "Jean-Paul", "Bao",
		},
		lastNames: []string{
			"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
			"Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas",
			"Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "White",
			"Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young",
			"Allen", "King", "Wright", "Scott", "Torres", "Nguyen", "Hill", "Flores",
			"Green", "Adams", "Nelson", "Baker", "Hall", "Rivera", "Campbell", "Mitchell",
			"Carter", "Roberts", "O'Connor", "McDonald", "Van Buren", "St. Clair", "Patel", "Kim",
			"Washington", "Okafor", "Chen", "Nakamura", "Kowalski", "Fitzgerald", "De La Cruz", "Smith-Jones",
		},
		streets: []string{
			"Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Elm St", "Pine St", "Washington Blvd",
			"Lakeview Dr", "Park Ave", "Hillcrest Rd", "Sunset Blvd", "Highland Ave", "River Rd",
			"Church St", "Mill Rd", "Jefferson St", "Lincoln Ave", "Meadow Ln", "Forest Dr",
			"Spring St", "Willow Way", "Chestnut St", "Broadway", "Market St", "N 5th St",
			"S Central Ave", "E 42nd St", "W Grand Ave", "Martin Luther King Jr Blvd", "Old County Rd",
		},
		units:     []string{"Apt ", "Apt ", "Unit ", "Suite ", "# "},
		campaigns: []string{"FB-2026-11", "GGL-SEM-07", "TT-RETARGET", "EMAIL-NOV", "AFF-1042", "RADIO-TX"},
		domains: []string{
			"gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "aol.com", "icloud.com",
			"comcast.net", "att.net", "example.com", "protonmail.com",
		},
		residenceLabels: []string{"Home Owner", "Rent", "Living with Family", "Other"},
		incomeLabels:    []string{"Employed", "Social Security", "Pension"},
		purposeLabels:   []string{"Debt Consolidation", "Home Improvement"},
		trueWords:       []string{"true", "TRUE", "Yes", "yes", "Y", "1"},
		// The last entry, "", is only used for coApplicant (absent).
		falseWords: []string{"false", "No", "N", "0", "FALSE", ""},
		badStates:  []string{"XX", "Texsa", "ZZ", "Calif."},
		homeAreaCodes: []int{
			512, 212, 312, 415, 602, 713, 305, 404, 206, 617,
			303, 503, 702, 214, 619, 215, 313, 614, 704, 801,
		},
		cellAreaCodes: []int{
			737, 646, 773, 628, 480, 832, 786, 470, 425, 857,
			720, 971, 725, 469, 858, 267, 248, 380, 980, 385,
		},
		cities: []city{
			{"Austin", "TX", "Texas", 78701},
			{"New York", "NY", "New York", 10001},
			{"Boston", "MA", "Massachusetts", 2108},
			{"Chicago", "IL", "Illinois", 60601},
			{"Phoenix", "AZ", "Arizona", 85003},
			{"Philadelphia", "PA", "Pennsylvania", 19102},
			{"San Diego", "CA", "California", 92101},
			{"Dallas", "TX", "Texas", 75201},
			{"San Jose", "CA", "California", 95110},
			{"Jacksonville", "FL", "Florida", 32202},
			{"Columbus", "OH", "Ohio", 43204},
			{"Charlotte", "NC", "North Carolina", 28202},
			{"Indianapolis", "IN", "Indiana", 46201},
			{"Seattle", "WA", "Washington", 98101},
			{"Denver", "CO", "Colorado", 80202},
			{"Washington", "DC", "District of Columbia", 20001},
			{"Nashville", "TN", "Tennessee", 37201},
			{"Oklahoma City", "OK", "Oklahoma", 73102},
			{"Las Vegas", "NV", "Nevada", 89101},
			{"Portland", "OR", "Oregon", 97201},
			{"Baltimore", "MD", "Maryland", 21201},
			{"Milwaukee", "WI", "Wisconsin", 53202},
			{"Albuquerque", "NM", "New Mexico", 87102},
			{"Sacramento", "CA", "California", 95811},
			{"Kansas City", "MO", "Missouri", 64105},
			{"Atlanta", "GA", "Georgia", 30303},
			{"Miami", "FL", "Florida", 33125},
			{"Minneapolis", "MN", "Minnesota", 55401},
			{"New Orleans", "LA", "Louisiana", 70112},
			{"Cleveland", "OH", "Ohio", 44102},
			{"Hartford", "CT", "Connecticut", 6103},
			{"Newark", "NJ", "New Jersey", 7102},
			{"Honolulu", "HI", "Hawaii", 96813},
			{"Anchorage", "AK", "Alaska", 99501},
			{"Salt Lake City", "UT", "Utah", 84101},
			{"Omaha", "NE", "Nebraska", 68102},
			{"Louisville", "KY", "Kentucky", 40202},
			{"Birmingham", "AL", "Alabama", 35203},
			{"Providence", "RI", "Rhode Island", 2903},
			{"San Juan", "PR", "Puerto Rico", 901},
		},
	}
}
