// Package decode turns input bytes into observations: it reads the mcptrace
// wire log (one JSON object per line), parses every HTTP body and stdio frame
// once into JSON-RPC messages, and parses text/event-stream bodies following
// the WHATWG server-sent events rules. A line that cannot be used comes back
// as a *LineError with a stable reason code, for the quarantine.
//
// Decoding is pure and safe to run on many goroutines at once.
package decode
