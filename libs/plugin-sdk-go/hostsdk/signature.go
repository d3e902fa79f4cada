package hostsdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"plugin-host.dev/sdk-go/v2/hostsdk/wire"
)

var (
	timestampPattern  = regexp.MustCompile(`^\d{1,12}$`)
	deliveryIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	signaturePattern  = regexp.MustCompile(`^v1=[0-9a-f]{64}$`)
)

// Sign computes the signature header value of a request: "v1=" + lowercase hex HMAC-SHA256 with the
// secret's UTF-8 bytes as key over timestamp + "." + deliveryID + "." + rawBody (docs/protocol/http-signing.md).
func Sign(secret, timestamp, deliveryID string, rawBody []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + "." + deliveryID + "."))
	m.Write(rawBody)
	return wire.SignatureVersion + "=" + hex.EncodeToString(m.Sum(nil))
}

// SignatureError is a refused signature: Code is a signature.* code (all answered with 401).
type SignatureError struct {
	Code    string
	Message string
}

func (e *SignatureError) Error() string { return e.Code + ": " + e.Message }

// VerifySignature checks the host's signature headers of a request (steps 1 to 3 of the spec: headers
// present and well formed, timestamp within tolerance, a signature matching any secret, compared in
// constant time). The replay check is the caller's (see ReplayGuard). It returns the delivery id and
// the timestamp.
func VerifySignature(header http.Header, rawBody []byte, secrets []string, tolerance time.Duration, now time.Time) (string, int64, error) {
	ts := header.Get(wire.HTTPHeaderTimestamp)
	id := header.Get(wire.HTTPHeaderDeliveryID)
	sig := header.Get(wire.HTTPHeaderSignature)
	var missing []string
	for name, v := range map[string]string{wire.HTTPHeaderTimestamp: ts, wire.HTTPHeaderDeliveryID: id, wire.HTTPHeaderSignature: sig} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", 0, &SignatureError{wire.CodeSignatureMissing, fmt.Sprintf("missing header(s) %s; only requests signed by the host are accepted", strings.Join(sortedStrings(missing), ", "))}
	}
	var candidates []string
	for _, s := range strings.Split(sig, ",") {
		if s = strings.TrimSpace(s); signaturePattern.MatchString(s) {
			candidates = append(candidates, s)
		}
	}
	if !timestampPattern.MatchString(ts) || !deliveryIDPattern.MatchString(id) || len(candidates) == 0 {
		return "", 0, &SignatureError{wire.CodeSignatureMalformed, "the signature headers are malformed (expected unix seconds, a delivery id and v1=<64 lowercase hex>)"}
	}
	seconds, _ := strconv.ParseInt(ts, 10, 64)
	skew := float64(now.UnixMilli())/1000 - float64(seconds)
	if math.Abs(skew) > tolerance.Seconds() {
		direction := "ago"
		if skew < 0 {
			direction = "in the future"
		}
		return "", 0, &SignatureError{wire.CodeSignatureExpired, fmt.Sprintf("the request was signed %.0f s %s by this server's clock (tolerance %.0f s); keep both clocks in sync with NTP", math.Abs(skew), direction, tolerance.Seconds())}
	}
	valid := false
	for _, secret := range secrets {
		expected := []byte(Sign(secret, ts, id, rawBody))
		for _, c := range candidates {
			// Every pair is compared, so the time taken does not tell which one matched.
			if hmac.Equal(expected, []byte(c)) {
				valid = true
			}
		}
	}
	if !valid {
		return "", 0, &SignatureError{wire.CodeSignatureInvalid, "the signature does not match; configure the signing secret shown when the plugin was registered"}
	}
	return id, seconds, nil
}

func sortedStrings(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

// ReplayGuard remembers delivery ids until they expire, bounded to maxEntries (oldest dropped first).
type ReplayGuard struct {
	mu         sync.Mutex
	seen       map[string]time.Time
	order      []string
	maxEntries int
}

// NewReplayGuard makes a guard holding at most maxEntries ids.
func NewReplayGuard(maxEntries int) *ReplayGuard {
	return &ReplayGuard{seen: map[string]time.Time{}, maxEntries: maxEntries}
}

// Remember records the id until expires; false when it was already seen and has not expired.
func (g *ReplayGuard) Remember(id string, expires, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if until, ok := g.seen[id]; ok && until.After(now) {
		return false
	}
	if _, ok := g.seen[id]; !ok {
		g.order = append(g.order, id)
	}
	g.seen[id] = expires
	// Prune from the oldest: expired ids, and any beyond the bound.
	for len(g.order) > 0 {
		first := g.order[0]
		until, ok := g.seen[first]
		if ok && len(g.seen) <= g.maxEntries && until.After(now) {
			break
		}
		delete(g.seen, first)
		g.order = g.order[1:]
	}
	return true
}
