package ledger

import "crypto/rand"

// readRandom fills b from the system's random source.
func readRandom(b []byte) (int, error) { return rand.Read(b) }
