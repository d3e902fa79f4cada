package hostsdk

// dateTimePattern is the protocol schemas' pattern for "format": "date-time" (an RFC 3339 instant with
// a real calendar date, "T" and "Z" in capitals). Every event's timestamp is checked against it, and the
// regular expression costs more than the rest of the event's checks together, so a schema with exactly
// this pattern is checked by isDateTime, which accepts the same strings (a test compares the two over
// every date of several years and many broken forms). Any other pattern keeps its regular expression.
const dateTimePattern = `^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$`

// isDateTime reports whether s matches dateTimePattern.
func isDateTime(s []byte) bool {
	// YYYY-MM-DDTHH:MM:SS, at least 19 bytes, then the fraction and the zone.
	if len(s) < 20 {
		return false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return false
	}
	two := func(i int) int { return int(s[i]-'0')*10 + int(s[i+1]-'0') }
	century, year, month, day := two(0), two(2), two(5), two(8)
	var days int
	switch month {
	case 1, 3, 5, 7, 8, 10, 12:
		days = 31
	case 4, 6, 9, 11:
		days = 30
	case 2:
		days = 28
		// The leap years of the proleptic Gregorian calendar, year 0000 included.
		if (year != 0 && year%4 == 0) || (year == 0 && century%4 == 0) {
			days = 29
		}
	default:
		return false
	}
	if day < 1 || day > days || two(11) > 23 || two(14) > 59 || two(17) > 59 {
		return false
	}
	i := 19
	if s[i] == '.' {
		i++
		digits := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == digits {
			return false
		}
	}
	switch {
	case i == len(s)-1:
		return s[i] == 'Z'
	case i == len(s)-6:
		return (s[i] == '+' || s[i] == '-') && isDigit(s[i+1]) && isDigit(s[i+2]) && s[i+3] == ':' &&
			isDigit(s[i+4]) && isDigit(s[i+5]) && two(i+1) <= 23 && two(i+4) <= 59
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
