// Package ellipsis shortens text for display in places of a fixed width (table cells, log
// prefixes, window titles), marking what was cut with an ellipsis.
package ellipsis

import "strings"

// Mark is what Truncate and Middle put where they cut.
const Mark = "…"

// Truncate returns s when it has at most max characters, else its first max-1 characters
// (without trailing spaces) followed by Mark, so the result is never longer than max.
// A max below 1 gives "".
func Truncate(s string, max int) string {
	if max < 1 {
		return ""
	}
	if len(s) <= max {
		return s
	}
	return strings.TrimRight(s[:max-1], " ") + Mark
}

// Middle returns s when it has at most max characters, else its start and its end with Mark
// between them (the start gets the extra character), so the result is never longer than max.
// It suits paths and identifiers, whose end says the most. A max below 1 gives "".
func Middle(s string, max int) string {
	if max < 1 {
		return ""
	}
	if len(s) <= max {
		return s
	}
	keep := max - 1
	tail := keep / 2
	head := keep - tail
	return s[:head] + Mark + s[len(s)-tail:]
}
