package main

import (
	"fmt"
	"strings"
)

// didYouMean returns ": did you mean X?" for the command of cmds whose
// name, with the words of prefix taken off, is closest to typed, when it
// is at most 2 edits away; else "".
func didYouMean(typed, prefix string, cmds []*command) string {
	best, bestDist := "", 3
	for _, cmd := range cmds {
		if d := editDistance(typed, strings.TrimPrefix(cmd.name, prefix)); d < bestDist {
			best, bestDist = cmd.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(": did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes: the
// fewest insertions, deletions and substitutions that make one the other.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
