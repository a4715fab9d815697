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
// The n-th table of an array of tables, and its keys, are also found
// under the path with the index, as in retention[0].kind (see index).
func keyLines(data []byte) map[string]int {
	return readKeys(data).lines
}

// valueAt returns the dotted key whose value, or an element of it, lies at
// the line and column (from 1, in bytes) of a TOML document, and the text
// of that value, or element; "" and "" where no value lies. The decoder
// reports the place of a value it cannot convert (an integer that int64
// cannot hold) without its key.
func valueAt(data []byte, line, column int) (key, text string) {
	k := readKeys(data)
	offset := column - 1
	if line > 1 && line-2 < len(k.newlines) {
		offset += k.newlines[line-2] + 1
	}
	for _, v := range k.values {
		if v.offset <= offset && offset < v.offset+v.length {
			return v.key, string(data[v.offset : v.offset+v.length])
		}
	}
	return "", ""
}

// readKeys reads the keys of a TOML document as far as it parses.
func readKeys(data []byte) *keyLiner {
	var newlines []int
	for i, b := range data {
		if b == '\n' {
			newlines = append(newlines, i)
		}
	}
	k := &keyLiner{lines: make(map[string]int), newlines: newlines}
	k.p.Reset(data)
	var table []string
	arrays := make(map[string]int) // tables seen so far, by array
	for k.p.NextExpression() {
		switch e := k.p.Expression(); e.Kind {
		case unstable.Table:
			table = k.key(nil, e.Key())
		case unstable.ArrayTable:
			table = k.key(nil, e.Key())
			name := dotted(table)
			table = append(table, index(arrays[name]))
			arrays[name]++
			if _, ok := k.lines[dotted(table)]; !ok {
				it := e.Key()
				for it.Next() {
					k.lines[dotted(table)] = k.line(int(it.Node().Raw.Offset))
				}
			}
		case unstable.KeyValue:
			k.keyValue(table, e)
		}
	}
	return k
}

// keyLiner is the state of readKeys.
type keyLiner struct {
	p        unstable.Parser
	lines    map[string]int
	newlines []int        // offsets of '\n' in the document
	values   []valueRange // the scalar values, in the order of the document
}

// valueRange is where a scalar value of the key lies in the document.
type valueRange struct {
	key            string // dotted
	offset, length int
}

// keyValue records the lines of the key-value kv under the table at prefix,
// and of the keys of an inline table it holds, and where its values lie.
func (k *keyLiner) keyValue(prefix []string, kv *unstable.Node) {
	k.value(k.key(prefix, kv.Key()), kv.Value())
}

// value records where the value v of the key at path lies: each of its
// elements for an array, each key of it for an inline table.
func (k *keyLiner) value(path []string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable, unstable.Array:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				k.keyValue(path, n)
			} else {
				k.value(path, n)
			}
		}
	default:
		k.values = append(k.values, valueRange{dotted(path), int(v.Raw.Offset), int(v.Raw.Length)})
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
			k.lines[name] = k.line(int(n.Raw.Offset))
		}
	}
	return path
}

// index is the part of a key path that names the i-th table of an array
// of tables.
func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

// line returns the line of the byte at offset.
func (k *keyLiner) line(offset int) int {
	line, _ := slices.BinarySearch(k.newlines, offset)
	return line + 1
}

// dotted writes a key path as TOML does, quoting the parts that are not
// bare keys; an index (see index) follows its array without a dot.
func dotted(path []string) string {
	var b strings.Builder
	for i, part := range path {
		if strings.HasPrefix(part, "[") && strings.HasSuffix(part, "]") && strings.Trim(part[1:len(part)-1], "0123456789") == "" && len(part) > 2 {
			b.WriteString(part)
			continue
		}
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
