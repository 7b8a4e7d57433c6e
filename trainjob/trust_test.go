package trainjob

import (
	"testing"
	"time"
)

func TestTimeLeftIsBelievedOnceTheJobRanThatLongOrEnough(t *testing.T) {
	for name, tc := range map[string]struct {
		ran, left, enough time.Duration
		want              bool
	}{
		"a first report of 10 s left, 5 s in":       {ran: 5 * time.Second, left: 10 * time.Second, enough: 10 * time.Minute, want: false},
		"10 s left after 10 s":                      {ran: 10 * time.Second, left: 10 * time.Second, enough: 10 * time.Minute, want: true},
		"an hour left after 9 minutes":              {ran: 9 * time.Minute, left: time.Hour, enough: 10 * time.Minute, want: false},
		"an hour left after 10 minutes: ran enough": {ran: 10 * time.Minute, left: time.Hour, enough: 10 * time.Minute, want: true},
		"nothing left, not yet started":             {ran: 0, left: 0, enough: 10 * time.Minute, want: true},
		"enough of 0 believes every report at once": {ran: 0, left: time.Hour, enough: 0, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := TimeLeftBelieved(tc.ran, tc.left, tc.enough); got != tc.want {
				t.Errorf("TimeLeftBelieved(%v, %v, %v) = %v, want %v", tc.ran, tc.left, tc.enough, got, tc.want)
			}
		})
	}
}
