package classify

import (
	"strconv"
	"strings"

	"mcptrace/schema"
)

// IDKey is the text an id compares by, within its type (SameID also compares
// the types: 1 is never "1"). A string id is its value, exactly. A number id
// is its exact decimal value, never a float64: an integer, however written
// (1, 1.0, 1e0, 10E-1, 0.1e1; -0 is 0), is its integer digits ("1"), so
// 9007199254740993 and 9007199254740992, equal as float64, stay apart; any
// other number is its significant digits and exponent ("15e-1" for 1.5 and
// 1.50). Text that is not a JSON number is compared as written.
//
// JSON.parse would make 1 and 1.0 the same number, and the TypeScript SDK
// would pair them; so do we. Where JSON.parse rounds (beyond 2^53) we do not:
// an id is an identifier, and two different digit strings are two requests.
func IDKey(id schema.ID) string {
	if id.Type != schema.IDNumber {
		return id.Text
	}
	return numberKey(id.Text)
}

// maxIntDigits bounds how far an exponent is written out as zeros: a larger
// integer keeps the exponent form, so "1e999999999" costs nothing.
const maxIntDigits = 64

func numberKey(s string) string {
	if plainInt(s) {
		return s // the common case: no allocation
	}
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg, i = true, i+1
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[start:i]
	if intPart == "" || (intPart[0] == '0' && len(intPart) > 1) {
		return s // not a JSON number
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fs:i]
		if frac == "" {
			return s
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil || e > 1<<30 || e < -(1<<30) || strings.HasPrefix(s[i+1:], "+-") {
			return s
		}
		exp, i = e, len(s)
	}
	if i != len(s) {
		return s
	}
	// value = digits × 10^exp, digits without leading or trailing zeros.
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if digits == "" {
		return "0"
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if exp >= 0 && len(digits)+exp <= maxIntDigits {
		return sign + digits + strings.Repeat("0", exp)
	}
	return sign + digits + "e" + strconv.Itoa(exp)
}

// plainInt reports whether s is an integer in canonical form: -?[1-9][0-9]*
// or 0.
func plainInt(s string) bool {
	if strings.HasPrefix(s, "-") {
		s = s[1:]
		if s == "0" {
			return false // -0 is 0
		}
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
