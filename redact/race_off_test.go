//go:build !race

package redact

// raceDetector says whether the tests run under the race detector, whose
// instrumentation allocates: allocation counts mean nothing there.
const raceDetector = false
