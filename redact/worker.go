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
	strs []string // a slab the pointers of changed fields point into
}

// urlMemo is a URL as a field's action and SanitizeURL leave it.
type urlMemo struct {
	field string
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
		v = w.sc.mask(v, r.Stats)
		if len(v) > a.N && utf8.RuneCountInString(v) > a.N {
			v = string([]rune(v)[:a.N]) + "…"
		}
		return v, true
	}
	return "", false
}

// Optional is Redactor.Optional; an unchanged value keeps its pointer.
func (w *Worker) Optional(field string, v **string) {
	if *v == nil {
		return
	}
	s, ok := w.Text(field, **v)
	switch {
	case !ok:
		*v = nil
	case s != **v:
		*v = w.Str(s)
	}
}

// Required is Redactor.Required.
func (w *Worker) Required(field string, v *string) {
	s, _ := w.Text(field, *v)
	*v = s
}

// URL redacts a URL column: unless the policy keeps the field as it is,
// SanitizeURL, then the field's action, as Optional does. Each URL is
// worked out once per worker.
func (w *Worker) URL(field string, v **string) {
	if *v == nil {
		return
	}
	a := w.r.Policy.Action(field)
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

func (w *Worker) sanitize(field string, a Action, raw string) urlMemo {
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
		if a.Kind == Truncate && len(s) > a.N && utf8.RuneCountInString(s) > a.N {
			s = string([]rune(s)[:a.N]) + "…"
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
