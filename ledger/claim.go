package ledger

import "time"

// State is a lead's state in the ledger: claimed before its first call,
// then the row's status after its answer (lead.Status's spelling).
type State string

// The states of a lead. Claimed is the only one that is no answer: a run
// holds the lead now, or held it when it died (then its call may have
// reached the service: the next claim sends it with the own-lead check,
// which settles it).
const (
	StateClaimed      State = "claimed"
	StateCreated      State = "created"
	StateProcessed    State = "processed"
	StateSubmitted    State = "submitted"
	StateSubmitFailed State = "submit_failed"
	StateFailed       State = "failed"
	StateUnverified   State = "unverified"
)

// Kind is what a claim decided.
type Kind uint8

// The kinds of Decision.
const (
	// Send: this run holds the lead now; send createLead.
	Send Kind = iota
	// AlreadySent: an earlier run created this lead, with this content,
	// and it needs nothing more (processed, or submitted): send nothing.
	AlreadySent
	// Submit: an earlier run created this lead, qualified, and it is not
	// submitted (the run died or its submitLead failed): this run holds
	// it now; submit it by Earlier.ServiceID, create nothing.
	Submit
	// Conflict: an earlier run created a lead under this leadId with
	// other content: send nothing unless told to (ClaimPolicy).
	Conflict
	// Busy: a live run holds the lead (its call in flight, or its
	// submission to come): ask again later (Claim waits by itself).
	Busy
)

// Decision is what the ledger says about one lead a run is about to
// send.
type Decision struct {
	Kind Kind
	// Ambiguous (Send): an earlier createLead for the lead may have
	// reached the service without an answer recorded (a run died while
	// it held the lead, or its answer was lost or unverified): a
	// duplicate answer must get the own-lead check.
	Ambiguous bool
	// Key is the lead's key, for the answer (Run.Record).
	Key Key
	// Earlier is what the ledger holds of the lead: set for AlreadySent,
	// Submit and Conflict.
	Earlier *Earlier
}

// Earlier is a lead an earlier run created.
type Earlier struct {
	// Run is the run whose createLead created it, At when it answered,
	// Results that run's results file (absolute), Row its row there.
	Run     int64
	At      time.Time
	Results string
	Row     int
	// ServiceID is the service's lead id; ResultCode and Bid its answer.
	ServiceID  string
	ResultCode int
	Bid        string
	// State is the lead's state now (processed, submitted, created,
	// submit_failed).
	State State
}

// Submitted reports whether the lead was submitted.
func (e *Earlier) Submitted() bool { return e.State == StateSubmitted }

// ClaimPolicy is what a run does with a lead an earlier run created.
type ClaimPolicy struct {
	// Resend sends every lead, whatever the ledger holds (a created but
	// unsubmitted lead is still only submitted).
	Resend bool
	// ResendChanged sends a lead whose leadId an earlier run created with
	// other content (else: Conflict).
	ResendChanged bool
}

// held is a lead's row as a claim finds it.
type held struct {
	state     State
	hash      string
	ambiguous bool
	run       int64 // the run that last claimed or answered it
	// alive reports whether run is alive and not the claiming run.
	alive bool
}

// decide is the one rule for a claim of a lead the ledger holds already
// (h), with content hash hash (may be "": unknown, taken as the same).
// It returns the decision's kind and whether the claim takes the lead
// (the caller records this run as its holder).
//
//	state                  same content            other content
//	claimed, run alive     Busy                    Busy
//	claimed, run dead      Send, ambiguous         Send, ambiguous
//	created, run alive     Busy                    Busy
//	created, run dead      Submit                  Conflict (ResendChanged: Send)
//	submit_failed          Submit                  Conflict (ResendChanged: Send)
//	processed, submitted   AlreadySent (Resend:    Conflict (ResendChanged
//	                       Send)                   or Resend: Send)
//	failed                 Send, ambiguous as the failure was
//	unverified             Send, ambiguous
func decide(h held, hash string, p ClaimPolicy) (kind Kind, ambiguous, take bool) {
	same := hash == "" || h.hash == "" || hash == h.hash
	changedOK := p.ResendChanged || p.Resend
	switch h.state {
	case StateClaimed:
		if h.alive {
			return Busy, false, false
		}
		return Send, true, true
	case StateCreated, StateSubmitFailed:
		switch {
		case h.state == StateCreated && h.alive:
			return Busy, false, false
		case same:
			return Submit, false, true
		case changedOK:
			return Send, true, true
		}
		return Conflict, false, false
	case StateProcessed, StateSubmitted:
		switch {
		case same && p.Resend:
			return Send, false, true
		case same:
			return AlreadySent, false, false
		case changedOK:
			return Send, false, true
		}
		return Conflict, false, false
	case StateFailed:
		return Send, h.ambiguous, true
	}
	// Unverified, or a state this bulkload does not know: the lead may
	// exist; the own-lead check settles a duplicate answer.
	return Send, true, true
}
