package detect

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZSched(t *testing.T) {
	path := os.Getenv("ZZ_FILE")
	if path == "" {
		t.Skip()
	}
	to, _ := time.Parse(time.RFC3339, os.Getenv("ZZ_TO"))
	loc, _ := time.LoadLocation(os.Getenv("ZZ_TZ"))
	f, _ := os.Open(path)
	defer f.Close()
	a := newAutoBeet(os.Getenv("ZZ_TZ"))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, ",")
		at, _ := time.Parse(time.RFC3339Nano, parts[0])
		n, _ := strconv.Atoi(parts[1])
		if at.After(to) {
			break
		}
		a.event(t, at, n)
		m, err := LoadRateModel(a.b.Model, loc)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("%s period=%d cluster=%s streak=%d lateMean=%d lateMax=%d flags=%08b sched=%v events=%d armed=%v\n", at.In(loc).Format("Mon 01-02 15:04"), m.period, time.Unix(m.cluster, 0).In(loc).Format("01-02 15:04"), m.streak, m.lateMean, m.lateMax, m.flags, m.Scheduled(), m.events, m.armedAt != 0)
	}
}
