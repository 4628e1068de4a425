package schedule

import (
	"testing"
	"time"
)

// BenchmarkNext measures one Next call in Europe/Riga for a fixed-time
// expression (wall-clock path) and wildcard ones (absolute-time path).
func BenchmarkNext(b *testing.B) {
	loc := mustLoc(b, "Europe/Riga")
	start := time.Date(2021, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, expr := range []string{"30 2 * * *", "0 9 * * 1-5", "*/15 * * * *", "0 */2 * * *"} {
		c := mustCron(b, expr)
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			at := start
			for b.Loop() {
				at = c.Next(at, loc)
				if at.Year() > 2030 { // stay within the tzdata table, like real use
					at = start
				}
			}
		})
	}
}

func BenchmarkPrev(b *testing.B) {
	loc := mustLoc(b, "Europe/Riga")
	at := time.Date(2021, 10, 31, 12, 0, 0, 0, time.UTC)
	for _, expr := range []string{"30 2 * * *", "*/15 * * * *"} {
		c := mustCron(b, expr)
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Prev(at, loc)
			}
		})
	}
}

func BenchmarkParseCron(b *testing.B) {
	for _, expr := range []string{"30 2 * * *", "0 12 L * *"} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseCron(expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
