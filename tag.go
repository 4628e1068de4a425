package beet

import (
	"context"
	"sort"
	"strings"
)

// Tag limits: a tag is a short word people filter the list by, such as
// "prod" or "billing", and it appears in badge URLs.
const (
	MaxTagLen      = 32
	MaxTagsPerBeet = 10
)

// ParseTags reads tags as people type them ("prod, billing night-jobs"):
// separated by commas or spaces, lower-cased, each letters, digits, '-',
// '_' or '.', deduplicated and sorted.
func ParseTags(field, s string) ([]string, error) {
	return CleanTags(field, strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }))
}

// CleanTags checks tags given as a list (the API): each is lower-cased and
// must be one valid tag (a comma or space inside one is refused, not
// split); duplicates go and the rest is sorted.
func CleanTags(field string, tags []string) ([]string, error) {
	seen := map[string]bool{}
	out := []string{}
	for _, t := range tags {
		t = strings.ToLower(t)
		if err := ValidateTag(field, t); err != nil {
			return nil, err
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTagsPerBeet {
		return nil, FieldError(field, "has %d tags; at most %d are allowed", len(out), MaxTagsPerBeet)
	}
	sort.Strings(out)
	return out, nil
}

// ValidateTag checks one lower-case tag.
func ValidateTag(field, t string) error {
	if t == "" || len(t) > MaxTagLen {
		return FieldError(field, "a tag is 1 to %d characters long", MaxTagLen)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return FieldError(field, "tag %q may hold only letters a-z, digits, '-', '_' and '.'", t)
		}
	}
	return nil
}

// TagStore keeps beets' tags.
type TagStore interface {
	// SetBeetTags replaces the beet's tags.
	SetBeetTags(ctx context.Context, beetID int64, tags []string) error
	// FindBeetTags returns the tags of each beet that has any, sorted.
	FindBeetTags(ctx context.Context, beetIDs []int64) (map[int64][]string, error)
	// FindAccountTags returns every tag used by the account's beets, sorted.
	FindAccountTags(ctx context.Context, accountID int64) ([]string, error)
}
