package redact

import (
	"strings"
	"unicode/utf8"
)

// Worker applies a Redactor's policy on one goroutine, with buffers and
// memos of its own: what the rows of a log repeat (names, versions, URLs,
// session ids, messages) is redacted once per worker, with the same result
// and the same counts as each time before. Fields left unchanged keep their
// value and pointer, nothing allocated. A Worker is not safe for concurrent
// use: take one per goroutine with Redactor.Worker and give it back with
// Release.
type Worker struct {
	r    *Redactor
	sc   scratch
	urls map[string]urlMemo
	strs []string   // a slab the pointers of changed fields point into
	last []lastText // by Field: the value each field had last, redacted
}

// lastText is the last value of one field and what its action made of it:
// most fields have the same value row after row (names, versions, media
// types), and one comparison finds it, without hashing it for the memos.
type lastText struct {
	a     Action
	pseud *Pseudonymizer // for a pseudonym
	in    string         // a memo's own copy of the value
	out   string
	counts
}

// urlMemo is a URL as a field's action and SanitizeURL leave it.
type urlMemo struct {
	field Field
	out   string
	keep  bool // the field is not dropped
	counts
}

const (
	maxURLMemo  = 256 // URLs a worker remembers
	maxFreeWork = 32  // idle workers a Redactor keeps
	slabStrings = 256 // strings in one slab
)

// Worker returns a worker for r: an idle one, or a new one.
func (r *Redactor) Worker() *Worker {
	r.mu.Lock()
	if n := len(r.free); n > 0 {
		w := r.free[n-1]
		r.free = r.free[:n-1]
		r.mu.Unlock()
		return w
	}
	r.mu.Unlock()
	return &Worker{r: r}
}

// Release gives w back to its Redactor; w must not be used after.
func (w *Worker) Release() {
	w.sc.json.trim()
	r := w.r
	r.mu.Lock()
	if len(r.free) < maxFreeWork {
		r.free = append(r.free, w)
	}
	r.mu.Unlock()
}

// Str returns a pointer to s. The pointers of one worker share slabs: one
// allocation for many fields.
func (w *Worker) Str(s string) *string {
	if len(w.strs) == cap(w.strs) {
		w.strs = make([]string, 0, slabStrings)
	}
	w.strs = append(w.strs, s)
	return &w.strs[len(w.strs)-1]
}

// Text is Redactor.Text.
func (w *Worker) Text(field, v string) (string, bool) {
	return w.text(w.r.Policy.Action(field), v)
}

func (w *Worker) text(a Action, v string) (string, bool) {
	r := w.r
	switch a.Kind {
	case Keep:
		return v, true
	case Pseudonymize:
		return w.sc.pseudonym(r.Pseud, v), true
	case MaskAction:
		return w.sc.mask(v, r.Stats), true
	case Truncate:
		return truncate(w.sc.mask(v, r.Stats), a.N), true
	}
	return "", false
}

// Optional is Redactor.Optional; an unchanged value keeps its pointer.
func (w *Worker) Optional(field string, v **string) { w.optional(w.r.Policy.Action(field), v) }

// OptionalField is Optional for a Field: the action by index, not by
// name, and the field's last value remembered.
func (w *Worker) OptionalField(f Field, v **string) {
	if *v == nil {
		return
	}
	s, ok := w.textField(f, **v)
	w.put(v, s, ok)
}

// textField is text under the action of f, through the field's last value:
// the same result and counts.
func (w *Worker) textField(f Field, v string) (string, bool) {
	r := w.r
	a := r.Policy.ActionOf(f)
	switch a.Kind {
	case Pseudonymize, MaskAction, Truncate:
	default:
		return w.text(a, v)
	}
	if len(v) > maxMemoText || uint(f) >= uint(len(Fields)) {
		return w.text(a, v)
	}
	if w.last == nil {
		w.last = make([]lastText, len(Fields))
	}
	l := &w.last[f]
	if l.in == v && l.a == a && (a.Kind != Pseudonymize || l.pseud == r.Pseud) && l.in != "" {
		l.addTo(r.Stats)
		return l.out, true
	}
	var e memo
	if a.Kind == Pseudonymize {
		e = w.sc.pseudonymMemo(r.Pseud, v)
	} else {
		e = w.sc.maskMemo(v)
		if a.Kind == Truncate {
			e.out = truncate(e.out, a.N)
		}
	}
	*l = lastText{a: a, pseud: r.Pseud, in: e.key, out: e.out, counts: e.counts}
	e.addTo(r.Stats)
	return e.out, true
}

func (w *Worker) optional(a Action, v **string) {
	if *v == nil {
		return
	}
	s, ok := w.text(a, **v)
	w.put(v, s, ok)
}

// put stores the redacted s in *v: nil when the field is dropped (not
// ok), the old pointer when the value is unchanged, else s interned.
func (w *Worker) put(v **string, s string, ok bool) {
	switch {
	case !ok:
		*v = nil
	case s != **v:
		*v = w.Str(s)
	}
}

// truncate keeps the first n characters of v and marks the cut with "…".
func truncate(v string, n int) string {
	if len(v) > n && utf8.RuneCountInString(v) > n {
		return string([]rune(v)[:n]) + "…"
	}
	return v
}

// Required is Redactor.Required.
func (w *Worker) Required(field string, v *string) {
	*v, _ = w.text(w.r.Policy.Action(field), *v)
}

// RequiredField is Required for a Field.
func (w *Worker) RequiredField(f Field, v *string) {
	*v, _ = w.textField(f, *v)
}

// URL redacts a URL column: unless the policy keeps the field as it is,
// SanitizeURL, then the field's action, as Optional does. Each URL is
// worked out once per worker.
func (w *Worker) URL(field string, v **string) { w.URLField(FieldOf(field), v) }

// URLField is URL for a Field.
func (w *Worker) URLField(field Field, v **string) {
	if *v == nil {
		return
	}
	a := w.r.Policy.ActionOf(field)
	if a.Kind == Keep {
		return
	}
	raw := **v
	m, ok := w.urls[raw]
	if !ok || m.field != field {
		m = w.sanitize(field, a, raw)
	} else {
		m.addTo(w.r.Stats)
	}
	switch {
	case !m.keep:
		*v = nil
	case m.out != raw:
		*v = w.Str(m.out)
	}
}

func (w *Worker) sanitize(field Field, a Action, raw string) urlMemo {
	r := w.r
	t := &w.sc.tally
	t.reset()
	s := sanitizeURL(raw, r.Pseud, t)
	m := urlMemo{field: field, keep: true}
	switch a.Kind {
	case Pseudonymize:
		s = w.sc.pseudonym(r.Pseud, s)
	case MaskAction, Truncate:
		s = maskWith(s, t)
		if a.Kind == Truncate {
			s = truncate(s, a.N)
		}
	case Keep:
	default:
		m.keep, s = false, ""
	}
	m.out = s
	m.counts = t.keep()
	if len(raw) <= 4*maxMemoText {
		if w.urls == nil || len(w.urls) >= maxURLMemo {
			w.urls = make(map[string]urlMemo)
		}
		w.urls[strings.Clone(raw)] = m
	}
	m.addTo(r.Stats)
	return m
}

// HashJSON is Pseudonymizer.HashJSON with the worker's buffers.
func (w *Worker) HashJSON(raw []byte) string { return w.sc.hashJSON(w.r.Pseud, raw) }

// Shape is Shape with the worker's buffers, counting in the Redactor's
// Stats.
func (w *Worker) Shape(raw []byte) string { return w.sc.shape(raw, w.r.Stats) }

// Arguments returns HashJSON(raw) and Shape(raw), reading raw once.
func (w *Worker) Arguments(raw []byte) (hash, shape string) {
	return w.sc.arguments(w.r.Pseud, raw, w.r.Stats)
}
