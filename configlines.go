package litequeue

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines returns the line of each key and table header of a valid TOML
// document, by its dotted path; for a key named more than once (a table
// implied by several dotted keys, an array of tables), its first line.
func keyLines(data []byte) map[string]int {
	var newlines []int
	for i, b := range data {
		if b == '\n' {
			newlines = append(newlines, i)
		}
	}
	k := keyLiner{lines: make(map[string]int), newlines: newlines}
	k.p.Reset(data)
	var table []string
	for k.p.NextExpression() {
		switch e := k.p.Expression(); e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = k.key(nil, e.Key())
		case unstable.KeyValue:
			k.keyValue(table, e)
		}
	}
	return k.lines
}

// keyLiner is the state of keyLines.
type keyLiner struct {
	p        unstable.Parser
	lines    map[string]int
	newlines []int // offsets of '\n' in the document
}

// keyValue records the lines of the key-value kv under the table at prefix,
// and of the keys of an inline table it holds.
func (k *keyLiner) keyValue(prefix []string, kv *unstable.Node) {
	path := k.key(prefix, kv.Key())
	if v := kv.Value(); v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				k.keyValue(path, n)
			}
		}
	}
}

// key records the line of each part of a dotted key under prefix, and
// returns the full path.
func (k *keyLiner) key(prefix []string, it unstable.Iterator) []string {
	path := slices.Clone(prefix)
	for it.Next() {
		n := it.Node()
		path = append(path, string(n.Data))
		name := dotted(path)
		if _, ok := k.lines[name]; !ok {
			offset := int(n.Raw.Offset)
			line, _ := slices.BinarySearch(k.newlines, offset)
			k.lines[name] = line + 1
		}
	}
	return path
}

// dotted writes a key path as TOML does, quoting the parts that are not
// bare keys.
func dotted(path []string) string {
	var b strings.Builder
	for i, part := range path {
		if i > 0 {
			b.WriteByte('.')
		}
		if part != "" && strings.Trim(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
			b.WriteString(part)
		} else {
			b.WriteString(strconv.Quote(part))
		}
	}
	return b.String()
}
