package hostsdk

import (
	"fmt"
	"math/rand"
	"testing"
)

// isDateTime accepts exactly what the schemas' date-time pattern accepts.
func TestIsDateTimeAgreesWithThePattern(t *testing.T) {
	if n := documentSchema("message-event.schema.json").properties["timestamp"].resolve(); n.patternSource != dateTimePattern || !n.dateTime {
		t.Fatalf("the event's timestamp pattern is not dateTimePattern any more: %s", n.patternSource)
	}
	re, err := ecmaPattern(dateTimePattern)
	if err != nil {
		t.Fatal(err)
	}
	check := func(s string) {
		t.Helper()
		if got, want := isDateTime([]byte(s)), re.MatchString(s); got != want {
			t.Fatalf("%q: isDateTime %v, pattern %v", s, got, want)
		}
	}
	accepted := 0
	// Every month and day (and the impossible ones) of common, leap and century years.
	for _, year := range []string{"0000", "0100", "0400", "1900", "2000", "2023", "2024", "2100", "2400", "9996", "9999", "1904", "2012", "2016", "2020", "2026"} {
		for month := 0; month <= 13; month++ {
			for day := 0; day <= 32; day++ {
				s := fmt.Sprintf("%s-%02d-%02dT12:30:45Z", year, month, day)
				check(s)
				if re.MatchString(s) {
					accepted++
				}
			}
		}
	}
	if accepted < 16*365 {
		t.Fatalf("only %d dates accepted", accepted)
	}
	for _, s := range []string{
		"2026-01-01T00:00:00Z", "2026-01-01T23:59:59Z", "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z",
		"2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.1234567890Z", "2026-01-01T00:00:00.Z", "2026-01-01T00:00:00,5Z",
		"2026-01-01T00:00:00+08:00", "2026-01-01T00:00:00-23:59", "2026-01-01T00:00:00+24:00", "2026-01-01T00:00:00+08:60",
		"2026-01-01T00:00:00.5+08:00", "2026-01-01T00:00:00+0800", "2026-01-01T00:00:00+08", "2026-01-01T00:00:00",
		"2026-01-01t00:00:00Z", "2026-01-01T00:00:00z", "2026-01-01 00:00:00Z", "2026-1-01T00:00:00Z", "20260101T000000Z",
		"2026-01-01T00:00:00ZZ", " 2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z ", "2026-01-01T00:00:00Z\n", "+2026-01-01T00:00:00Z",
		"2026-01-01T00:00:00.5.5Z", "2026-01-01T00:00:00+08:00Z", "２026-01-01T00:00:00Z", "2026-01-01T00:00:00.٣Z", "",
	} {
		check(s)
	}
	// Random edits of a valid instant: every byte position, replaced, dropped or doubled.
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("0123456789-:T.Z+ zt,")
	for n := 0; n < 20000; n++ {
		b := []byte("2024-02-29T23:59:59.999+05:30")
		for k := 0; k <= n%3; k++ {
			at := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b[at] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = append(b[:at], b[at+1:]...)
			default:
				b = append(b[:at+1], b[at:]...)
			}
		}
		check(string(b))
	}
}
