package classify

// OracleClassify is Classify as it was (classify_oracle_test.go), for the
// differential tests of package classify_test.
var OracleClassify = oracleClassifyAll
