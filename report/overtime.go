package report

import (
	"context"
	"fmt"
	"time"
)

// bucketWidths are the widths OverTime chooses from, narrowest first.
var bucketWidths = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 28 * 24 * time.Hour}

// maxBuckets bounds the buckets OverTime returns.
const maxBuckets = 48

// bucketWidth is the narrowest width that cuts first..last into at most
// maxBuckets buckets aligned on the Unix epoch.
func bucketWidth(first, last time.Time) time.Duration {
	for _, w := range bucketWidths {
		if bucketOf(last, w)-bucketOf(first, w)+1 <= maxBuckets {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// bucketOf is the number of t's bucket of width w since the Unix epoch
// (floor division, as the SQL's floor(epoch / w)).
func bucketOf(t time.Time, w time.Duration) int64 {
	s, n := t.Unix(), int64(w/time.Second)
	q := s / n
	if s%n != 0 && s < 0 {
		q--
	}
	return q
}

// OverTime is the overview's false successes over time: the exchanges by
// the bucket their started_at falls in (buckets of a width chosen so that
// there are at most 48, aligned on the Unix epoch in UTC), with the
// 2xx exchanges, the false successes and their rate over the 2xx, and
// the failures. The HTML report draws it; buckets without an exchange are
// not listed.
func (d *Dataset) OverTime(ctx context.Context) (*Table, error) {
	span, err := d.query(ctx, []Column{{Kind: Time}, {Kind: Time}}, "SELECT min(started_at), max(started_at) FROM ex")
	if err != nil {
		return nil, err
	}
	w := time.Hour
	if first, ok := span[0][0].(time.Time); ok {
		w = bucketWidth(first, span[0][1].(time.Time))
	}
	s := int64(w / time.Second)
	t, err := d.table(ctx, "over_time", "False successes over time (per "+widthText(w)+")",
		"bucket: the start of each "+widthText(w)+" (UTC) with an exchange; rate over the bucket's exchanges whose final status was 2xx",
		[]Column{{Name: "bucket", Kind: Time, Head: "from"}, {Name: "exchanges", Kind: Int}, {Name: "http_2xx", Kind: Int, Head: "2xx"},
			{Name: "false_successes", Kind: Int, Head: "false succ."}, {Name: "false_success_rate", Kind: Rate, Head: "false-succ. rate"},
			{Name: "failed", Kind: Int}},
		fmt.Sprintf(`SELECT to_timestamp(floor(epoch(started_at) / %[1]d) * %[1]d) AS b, count(*),
			count(*) FILTER (WHERE %[2]s), count(false_success),
			count(false_success)::DOUBLE / nullif(count(*) FILTER (WHERE %[2]s), 0), count(*) FILTER (WHERE failed)
		FROM ex WHERE started_at IS NOT NULL GROUP BY b ORDER BY b`, s, is2xx))
	if err != nil {
		return nil, err
	}
	t.Step = w
	return t, nil
}

func widthText(w time.Duration) string {
	switch {
	case w%(24*time.Hour) == 0:
		if w == 24*time.Hour {
			return "day"
		}
		return fmt.Sprintf("%d days", w/(24*time.Hour))
	case w%time.Hour == 0:
		if w == time.Hour {
			return "hour"
		}
		return fmt.Sprintf("%d hours", w/time.Hour)
	case w == time.Minute:
		return "minute"
	}
	return fmt.Sprintf("%d minutes", w/time.Minute)
}
