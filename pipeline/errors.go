package pipeline

import "errors"

// Side says which end of a run an error came from: the inputs (a path that
// is missing or unreadable, a stream that failed, a broker that refused)
// or the output (the dataset could not be locked, written or published).
// ingest's exit status tells them apart (README "Exit statuses").
type Side int

const (
	SideUnknown Side = iota
	SideInput
	SideOutput
)

// sideError marks an error with the Side it came from.
type sideError struct {
	side Side
	err  error
}

func (e *sideError) Error() string { return e.err.Error() }
func (e *sideError) Unwrap() error { return e.err }

// ErrorSide is the Side an error of Run or RunKafka came from (SideUnknown
// for one that is neither, such as a cancelled context).
func ErrorSide(err error) Side {
	var se *sideError
	if errors.As(err, &se) {
		return se.side
	}
	return SideUnknown
}

// inputErr marks err as the inputs' unless it is marked already.
func inputErr(err error) error { return mark(err, SideInput) }

// outputErr marks err as the output's unless it is marked already.
func outputErr(err error) error { return mark(err, SideOutput) }

func mark(err error, side Side) error {
	if err == nil || errors.Is(err, ErrStopped) || ErrorSide(err) != SideUnknown {
		return err
	}
	return &sideError{side: side, err: err}
}
