package beet

import (
	"context"
	"time"
)

// ProblemKind names what went wrong with an ingestion request.
type ProblemKind string

const (
	ProblemBadBody     ProblemKind = "bad_body"  // sent as JSON, but not a JSON object (text is a message, no problem)
	ProblemBadValue    ProblemKind = "bad_value" // value not a finite number
	ProblemBodyTooBig  ProblemKind = "body_too_large"
	ProblemRateLimited ProblemKind = "rate_limited" // one per burst, not one per request
	ProblemIgnoredBot  ProblemKind = "ignored_bot"  // a link-preview bot's request
	ProblemBadPath     ProblemKind = "bad_path"     // an unknown signal after the token (/stat); nothing recorded
	ProblemBadRID      ProblemKind = "bad_rid"      // ?rid= not a UUID; recorded without it
)

// MaxProblemsPerBeet bounds the problems kept per beet; older ones go.
const MaxProblemsPerBeet = 100

// MaxProblemDetailLen bounds a problem's detail text.
const MaxProblemDetailLen = 300

// Problem is something wrong with requests for a beet, noted on the beet
// instead of in the response (the endpoint always answers with the GIF).
type Problem struct {
	ID     int64
	BeetID int64
	At     time.Time
	Kind   ProblemKind
	Detail string
}

// ProblemStore keeps ingestion problems.
type ProblemStore interface {
	// AddProblem stores p and drops the beet's oldest problems beyond
	// MaxProblemsPerBeet.
	AddProblem(ctx context.Context, p *Problem) error
	// FindProblems returns the beet's problems, newest first.
	FindProblems(ctx context.Context, beetID int64, limit int) ([]*Problem, error)
}
