package redact

import (
	"maps"
	"testing"
)

// TestFieldMatchesByName holds OptionalField and RequiredField, which
// remember each field's last value, to Optional and Required by name on a
// fresh worker: the same value and the same counts, when a value comes back
// row after row (a secret counted each time), when the worker's Redactor
// changes its policy or its key between rows, and for every field.
func TestFieldMatchesByName(t *testing.T) {
	p1, _ := NewPseudonymizer("k1", []byte("0123456789abcdef0123456789abcdef"))
	p2, _ := NewPseudonymizer("k2", []byte("fedcba9876543210fedcba9876543210"))
	short := DefaultPolicy()
	short.actions["exchanges.error_message"] = Action{Kind: Truncate, N: 12}
	short.actions["exchanges.session_id"] = Action{Kind: MaskAction}
	short.indexed()
	vals := []string{"", "plain", "mail ana.lopez@example.com now", "mail ana.lopez@example.com now",
		"sess-1", "sess-1", "token ghp_Q8mZ2vN4xL7pR1sT6wY9bC3dF5gH0jK2lM4n", "plain", "plain"}
	fast := &Redactor{Policy: DefaultPolicy(), Pseud: p1, Stats: &Stats{}}
	slow := &Redactor{Policy: DefaultPolicy(), Pseud: p1, Stats: &Stats{}}
	w := fast.Worker()
	for round := range 4 {
		fast.Pseud, slow.Pseud = p1, p1
		if round%2 == 1 {
			fast.Pseud, slow.Pseud = p2, p2
		}
		fast.Policy, slow.Policy = DefaultPolicy(), DefaultPolicy()
		if round >= 2 {
			fast.Policy, slow.Policy = short, short
		}
		for _, v := range vals {
			for i, f := range Fields {
				got, want := v, v
				gotp, wantp := &got, &want
				if i%2 == 0 {
					w.OptionalField(Field(i), &gotp)
					sw := slow.Worker()
					sw.Optional(f.Name, &wantp)
					sw.Release()
				} else {
					w.RequiredField(Field(i), gotp)
					slow.Required(f.Name, wantp)
				}
				if (gotp == nil) != (wantp == nil) || gotp != nil && *gotp != *wantp {
					t.Fatalf("round %d, %s of %q: got %v, want %v", round, f.Name, v, gotp, wantp)
				}
			}
		}
	}
	w.Release()
	if g, s := fast.Stats.Counts(), slow.Stats.Counts(); !maps.Equal(g, s) || len(g) == 0 {
		t.Fatalf("counts %v, want %v", g, s)
	}
}
