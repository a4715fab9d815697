package litequeue

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/litequeue/litequeue/internal/store"
)

// Payloads sealed at rest: with [Options.SealKeys] set, the enqueuer seals
// each payload with AES-256-GCM where its bytes go to the store (see
// enqueueBatch.stored), and the Queue opens it where a row becomes a Job for
// the app or a handler (see sealer.view and runner.lease). Nothing else is
// sealed: the kind, the queue, the metadata, the unique key, the errors
// and the history are stored as they are.
//
// The stored form of a sealed payload, version 1:
//
//	magic    4 bytes   0xFF 'L' 'Q' 'S'
//	version  1 byte    1
//	idLen    1 byte    the length of the key's ID, 1…SealKeyIDLimit
//	id       idLen     the key's ID
//	nonce    12 bytes  random, drawn for each payload
//	sealed   n+16      AES-256-GCM of the n bytes of the payload, and its tag
//
// The associated data, authenticated but not stored again, is the header
// (magic to id) followed by the job's queue and kind, each after its
// length as a uvarint: a sealed payload copied onto a job of another kind
// or queue does not open. The job's ID is not bound: it is known only once
// the row is inserted, which would take a second write of each job, and
// [Copy] gives every job a new ID while it copies sealed payloads as they
// are. A payload copied onto another job of the same queue and kind opens
// there.
//
// The nonce is drawn at random (cipher.NewGCMWithRandomNonce), which is
// safe for some 2³² payloads under one key: rotate a key long before it
// has sealed four billion.
//
// A payload is taken as sealed when it begins with the magic bytes. 0xFF
// never begins valid JSON or UTF-8 text, so only a raw []byte payload that
// begins with them is taken for a sealed one.

// SealKeySize is the size of a [SealKey]'s Key in bytes: an AES-256 key.
const SealKeySize = 32

// SealKeyIDLimit is the longest [SealKey] ID, in bytes.
const SealKeyIDLimit = 64

// SealKey is a key that seals payloads at rest (see [Options.SealKeys]).
type SealKey struct {
	// ID names the key in each payload it seals, so that the payload opens
	// with it after the keys rotate: 1…[SealKeyIDLimit] bytes of ASCII
	// letters, digits, '-', '_' and '.'. It is stored in plain text.
	ID string
	// Key is [SealKeySize] bytes of secret: an AES-256 key, drawn from
	// crypto/rand, say.
	Key []byte
}

// sealMagic begins every sealed payload; sealVersion follows it.
const (
	sealMagic   = "\xffLQS"
	sealVersion = 1
	sealTag     = 16 // bytes of GCM's tag
	sealNonce   = 12 // bytes of GCM's nonce
)

// sealedClass is the ErrorClass of a run that failed because its payload
// did not open.
const sealedClass = "sealed"

// checkSealKeys refuses keys that cannot seal, naming the value and the
// limit, and returns a copy of keys that later changes to the caller's
// slice or keys do not reach.
func checkSealKeys(keys []SealKey) ([]SealKey, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out := make([]SealKey, len(keys))
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		if err := checkSealKeyID(k.ID); err != nil {
			return nil, fmt.Errorf("seal key %d: %w", i, err)
		}
		if j, ok := seen[k.ID]; ok {
			return nil, fmt.Errorf("seal key %d: ID %q is also the ID of key %d: IDs must be unique", i, k.ID, j)
		}
		seen[k.ID] = i
		if len(k.Key) != SealKeySize {
			return nil, fmt.Errorf("seal key %d (%q): key of %d bytes, want %d bytes (AES-256)", i, k.ID, len(k.Key), SealKeySize)
		}
		out[i] = SealKey{ID: k.ID, Key: bytes.Clone(k.Key)}
	}
	return out, nil
}

// checkSealKeyID refuses an ID that is not 1…SealKeyIDLimit bytes of
// ASCII letters, digits, '-', '_' and '.'.
func checkSealKeyID(id string) error {
	switch {
	case id == "":
		return errors.New("empty ID")
	case len(id) > SealKeyIDLimit:
		return fmt.Errorf("ID of %d bytes is over the limit of %d bytes", len(id), SealKeyIDLimit)
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return fmt.Errorf("ID %q holds %q: want ASCII letters, digits, '-', '_' and '.'", id, c)
		}
	}
	return nil
}

// A sealer seals and opens payloads with a Queue's keys, the first of
// which seals. The nil *sealer has no keys: it seals nothing and opens
// nothing, but still tells a sealed payload from another.
type sealer struct {
	keys []sealingKey
}

type sealingKey struct {
	id   string
	aead cipher.AEAD
}

// newSealer returns the sealer of the checked keys, nil for none.
func newSealer(keys []SealKey) *sealer {
	if len(keys) == 0 {
		return nil
	}
	s := &sealer{keys: make([]sealingKey, len(keys))}
	for i, k := range keys {
		block, err := aes.NewCipher(k.Key)
		if err != nil {
			panic("litequeue: seal key " + k.ID + ": " + err.Error()) // checkSealKeys checked the size
		}
		aead, err := cipher.NewGCMWithRandomNonce(block)
		if err != nil {
			panic("litequeue: seal key " + k.ID + ": " + err.Error()) // AES has GCM's block size
		}
		s.keys[i] = sealingKey{id: k.ID, aead: aead}
	}
	return s
}

// sealHeader returns the header of a payload sealed with the key id.
func sealHeader(id string) []byte {
	h := make([]byte, 0, len(sealMagic)+2+len(id))
	h = append(h, sealMagic...)
	return append(append(h, sealVersion, byte(len(id))), id...)
}

// sealAD returns the associated data of a payload with the header h, of a
// job of queue and kind.
func sealAD(h []byte, queue, kind string) []byte {
	ad := make([]byte, 0, len(h)+len(queue)+len(kind)+2*binary.MaxVarintLen64)
	ad = append(ad, h...)
	ad = append(binary.AppendUvarint(ad, uint64(len(queue))), queue...)
	return append(binary.AppendUvarint(ad, uint64(len(kind))), kind...)
}

// seal returns the stored forms of the payloads of a job of queue and
// kind, sealed with the first key; with no keys, payloads themselves.
func (s *sealer) seal(queue, kind string, payloads [][]byte) [][]byte {
	if s == nil {
		return payloads
	}
	k := s.keys[0]
	h := sealHeader(k.id)
	ad := sealAD(h, queue, kind)
	out := make([][]byte, len(payloads))
	for i, p := range payloads {
		b := make([]byte, 0, len(h)+sealNonce+len(p)+sealTag)
		out[i] = k.aead.Seal(append(b, h...), nil, p, ad) // appends the nonce it draws, then the sealed bytes
	}
	return out
}

// sealedPayload is a sealed payload taken apart.
type sealedPayload struct {
	version byte
	keyID   string
	header  []byte // magic to key ID
	body    []byte // nonce, sealed bytes and tag
}

// isSealed reports whether p is a sealed payload: one that begins with the
// magic bytes. It is the one cost of sealing on a Queue without keys.
func isSealed(p []byte) bool {
	return len(p) >= len(sealMagic) && string(p[:len(sealMagic)]) == sealMagic
}

// parseSealed takes apart the sealed payload p.
func parseSealed(p []byte) (sealedPayload, error) {
	n := len(sealMagic)
	if len(p) < n+2 {
		return sealedPayload{}, fmt.Errorf("sealed payload of %d bytes is cut short", len(p))
	}
	sp := sealedPayload{version: p[n]}
	if sp.version != sealVersion {
		return sp, fmt.Errorf("sealed payload of version %d: this litequeue opens version %d", sp.version, sealVersion)
	}
	idLen := int(p[n+1])
	if len(p) < n+2+idLen+sealNonce+sealTag {
		return sp, fmt.Errorf("sealed payload of %d bytes is cut short", len(p))
	}
	sp.header, sp.body = p[:n+2+idLen], p[n+2+idLen:]
	sp.keyID = string(sp.header[n+2:])
	return sp, nil
}

// sealKeyOf returns the ID of the key that sealed the payload p, "" if p
// is not sealed or its header cannot be read.
func sealKeyOf(p []byte) string {
	if !isSealed(p) {
		return ""
	}
	sp, _ := parseSealed(p)
	return sp.keyID
}

// sealError reports a sealed payload that did not open: a handler never
// gets its job, which dies at once with the ErrorClass "sealed".
type sealError struct {
	keyID  string // "" if the header could not be read
	reason string
}

// unopened reports whether err, which a run ended with, is that of a
// payload that did not open: the runner's own, never a handler's.
func unopened(err error) bool {
	_, ok := err.(*sealError)
	return ok
}

func (e *sealError) Error() string {
	if e.keyID == "" {
		return "litequeue: payload does not open: " + e.reason
	}
	return fmt.Sprintf("litequeue: payload sealed with key %q does not open: %s", e.keyID, e.reason)
}

// open returns the payload p of a job of queue and kind opened, and the ID
// of the key that sealed it; p itself and "" if p is not sealed.
func (s *sealer) open(queue, kind string, p []byte) ([]byte, string, error) {
	if !isSealed(p) {
		return p, "", nil
	}
	sp, err := parseSealed(p)
	if err != nil {
		return p, sp.keyID, &sealError{reason: err.Error()}
	}
	k, err := s.key(sp.keyID)
	if err != nil {
		return p, sp.keyID, err
	}
	plain, err := k.aead.Open(nil, nil, sp.body, sealAD(sp.header, queue, kind))
	if err != nil {
		return p, sp.keyID, &sealError{keyID: sp.keyID, reason: "wrong key, or bytes changed since it was sealed"}
	}
	if len(plain) == 0 {
		plain = nil // as Get reads an empty payload
	}
	return plain, sp.keyID, nil
}

// key returns the key with the given ID.
func (s *sealer) key(id string) (sealingKey, error) {
	var ids []string
	if s != nil {
		for _, k := range s.keys {
			if k.id == id {
				return k, nil
			}
			ids = append(ids, fmt.Sprintf("%q", k.id))
		}
	}
	have := "the Queue has no SealKeys"
	if len(ids) > 0 {
		have = "the Queue's SealKeys are " + strings.Join(ids, ", ")
	}
	return sealingKey{}, &sealError{keyID: id, reason: "no key with that ID (" + have + ")"}
}

// An openedJob is what a Job whose payload was sealed, and is opened,
// keeps of its sealing.
type openedJob struct {
	keyID  string // the key that sealed it
	stored []byte // the payload as stored, where Enqueue sealed it: for its event; else nil
}

// openJob opens j's payload in place, if sealed. A payload that does not
// open stays as stored, and the error says why.
func (s *sealer) openJob(j *Job) error {
	if !isSealed(j.Payload) {
		return nil
	}
	plain, id, err := s.open(j.Queue, j.Kind, j.Payload)
	if err != nil {
		return err
	}
	j.Payload, j.opened = plain, &openedJob{keyID: id}
	return nil
}

// Sealed reports whether j's payload is sealed at rest (see
// [Options.SealKeys]): the ID of the key that sealed it, "" if it is not
// sealed, and whether [Job.Payload] holds it opened. It is not opened, but
// as stored, when the Queue that read the job has no key of that ID, or
// the payload did not open with it (the wrong key under that ID, or bytes
// changed in the file); the handler never gets such a job: its run fails
// at once, for good, with the ErrorClass "sealed". An [Event]'s Job
// carries the payload as stored.
func (j *Job) Sealed() (keyID string, opened bool) {
	if j.opened != nil {
		return j.opened.keyID, true
	}
	return sealKeyOf(j.Payload), false
}

// view returns the public view of the row r, its payload opened if it is
// sealed and opens; else as stored.
func (s *sealer) view(r *store.JobRow) *Job {
	j := jobOf(r)
	_ = s.openJob(j) // a payload that does not open is returned as stored: see Job.Sealed
	return j
}
