package classify

import "testing"

// Every outcome, after a 2xx and after other statuses: interaction outcomes
// and UNKNOWN are never false successes, successes neither.
func TestFalseSuccess(t *testing.T) {
	want := map[string]string{
		ToolSuccess: "", Success: "", InputRequired: "", Cancelled: "", Unknown: "", HTTPError: "",
		ToolError: FalseToolError, JSONRPCError: FalseJSONRPCError,
		MalformedJSON: FalseInvalidResult, InvalidEnvelope: FalseInvalidResult,
		InvalidToolResult: FalseInvalidResult, InvalidResult: FalseInvalidResult,
		StreamIncomplete: FalseIncomplete, NoResponse: FalseIncomplete,
	}
	if len(want) != len(Outcomes) {
		t.Fatalf("the test lists %d outcomes, classify has %d", len(want), len(Outcomes))
	}
	for _, o := range Outcomes {
		w, ok := want[o]
		if !ok {
			t.Fatalf("outcome %s not covered", o)
		}
		for _, st := range []int32{200, 202, 299} {
			if got := FalseSuccess(st, o); got != w {
				t.Errorf("FalseSuccess(%d, %s) = %q, want %q", st, o, got, w)
			}
		}
		for _, st := range []int32{0, 199, 300, 404, 500} {
			if got := FalseSuccess(st, o); got != "" {
				t.Errorf("FalseSuccess(%d, %s) = %q, want none", st, o, got)
			}
		}
	}
	seen := map[string]bool{}
	for _, c := range FalseSuccessOrder {
		seen[c] = true
	}
	for o, c := range FalseSuccessClasses {
		if !seen[c] {
			t.Errorf("class %s of %s not in FalseSuccessOrder", c, o)
		}
	}
	for _, o := range Outcomes {
		fail := o != ToolSuccess && o != Success && o != InputRequired && o != Cancelled && o != Unknown
		if IsFailure(o) != fail {
			t.Errorf("IsFailure(%s) = %v", o, !fail)
		}
		if FalseSuccess(200, o) != "" && !IsFailure(o) {
			t.Errorf("%s is a false success but not a failure", o)
		}
	}
	if FinalStatus(nil) != 0 || FinalStatus([]int32{503, 200}) != 200 {
		t.Error("FinalStatus")
	}
}
