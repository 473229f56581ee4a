package correlate

// KeepExchanges sets keepExchanges for the package's external tests
// (history_test.go): on, later requests read every judged exchange
// itself, as before rems summarized it.
func KeepExchanges(on bool) { keepExchanges = on }
