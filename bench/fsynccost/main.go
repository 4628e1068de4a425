//go:build linux

// Command fsynccost measures what one durable write costs on this machine's
// disk, in wall time and in the CPU time it charges the process, for the ways
// a journal can make a small record durable: appending and calling fsync or
// fdatasync, or overwriting a file whose blocks were written (or only
// reserved with fallocate) beforehand and calling fdatasync.
//
//	go run ./bench/fsynccost -dir /var/lib/beet -n 2000 -size 1500
//
// The CPU column is what matters on a small machine: the kernel's share of a
// flush is charged to the process and competes with answering requests.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/beethq/beet/bench/benchkit"
)

func main() {
	dir := flag.String("dir", os.TempDir(), "directory on the disk to measure (files are created and removed there)")
	n := flag.Int("n", 2000, "durable writes per method")
	size := flag.Int("size", 1500, "bytes a write (a group of about ten pings)")
	noise := flag.Bool("noise", false, "meanwhile append 256 KiB and fsync every 10 ms to another file, as a database's log beside the journal does")
	checkpoint := flag.Bool("checkpoint", false, "meanwhile grow another file by 4 MiB in 4 KiB writes every 500 ms and fsync it after each 4 MiB, as a database's checkpoints do")
	flag.Parse()
	if *n <= 0 || *size <= 0 || *size > 1<<20 || int64(*n)*int64(*size) > 1<<30 {
		log.Fatal("fsynccost: -n must be positive, -size between 1 and 1048576, and -n × -size at most 1 GiB (the file written ahead)")
	}
	record := make([]byte, *size)
	for i := range record {
		record[i] = byte(i)
	}
	total := int64(*n) * int64(*size)
	methods := []struct {
		name    string
		prepare func(f *os.File) error
		write   func(f *os.File, i int) error
	}{
		{"append + fsync", nil, func(f *os.File, _ int) error {
			if _, err := f.Write(record); err != nil {
				return err
			}
			return f.Sync()
		}},
		{"append + fdatasync", nil, func(f *os.File, _ int) error {
			if _, err := f.Write(record); err != nil {
				return err
			}
			return syscall.Fdatasync(int(f.Fd()))
		}},
		{"overwrite zeros written ahead + fdatasync", func(f *os.File) error {
			if _, err := f.Write(make([]byte, total)); err != nil {
				return err
			}
			return f.Sync()
		}, overwrite(record)},
		{"overwrite fallocate'd space + fdatasync", func(f *os.File) error {
			if err := syscall.Fallocate(int(f.Fd()), 0, 0, total); err != nil {
				return err
			}
			return f.Sync()
		}, overwrite(record)},
	}
	if *noise {
		stop := startNoise(*dir, 10*time.Millisecond, 256<<10, 256<<10)
		defer stop()
	}
	if *checkpoint {
		stop := startNoise(*dir, 500*time.Millisecond, 4<<20, 4<<10)
		defer stop()
	}
	fmt.Printf("%d durable writes of %d bytes a method, in %s (log beside: %v, checkpoints beside: %v)\n\n", *n, *size, *dir, *noise, *checkpoint)
	fmt.Println("| method | wall a write | CPU a write | p50 | p99 | max |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, m := range methods {
		path := filepath.Join(*dir, fmt.Sprintf("fsynccost-%d-%d", os.Getpid(), i))
		f, err := os.Create(path)
		if err != nil {
			log.Fatal(err)
		}
		if m.prepare != nil {
			if err := m.prepare(f); err != nil {
				log.Fatalf("%s: %v", m.name, err)
			}
		}
		took := make([]time.Duration, *n)
		cpu0, wall0 := benchkit.SelfCPU(), time.Now()
		for j := range *n {
			t0 := time.Now()
			if err := m.write(f, j); err != nil {
				log.Fatalf("%s: %v", m.name, err)
			}
			took[j] = time.Since(t0)
		}
		wall, cpu := time.Since(wall0), benchkit.SelfCPU()-cpu0
		f.Close()
		os.Remove(path)
		slices.Sort(took)
		fmt.Printf("| %s | %.0f µs | %.0f µs | %v | %v | %v |\n", m.name, micros(wall, *n), micros(cpu, *n),
			took[len(took)/2].Round(time.Microsecond), took[len(took)*99/100].Round(time.Microsecond), took[len(took)-1].Round(time.Microsecond))
	}
}

// overwrite writes record i at its place in a file already as long as all of
// them, so the flush changes no file size and allocates no block.
func overwrite(record []byte) func(f *os.File, i int) error {
	return func(f *os.File, i int) error {
		if _, err := f.WriteAt(record, int64(i)*int64(len(record))); err != nil {
			return err
		}
		return syscall.Fdatasync(int(f.Fd()))
	}
}

// startNoise appends bytes, in writes of chunk bytes, and then fsyncs, every
// period, to a file of its own until stopped, and removes it then. Its CPU
// is counted in the methods' CPU column too, equally for each.
func startNoise(dir string, period time.Duration, bytes, chunk int) (stop func()) {
	f, err := os.CreateTemp(dir, "fsynccost-noise-")
	if err != nil {
		log.Fatal(err)
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		buf := make([]byte, chunk)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if st, err := f.Stat(); err == nil && st.Size() > 256<<20 {
				f.Truncate(0) // as a log is restarted after a checkpoint
				f.Seek(0, 0)
			}
			for range bytes / chunk {
				if _, err := f.Write(buf); err != nil {
					log.Fatal(err)
				}
			}
			f.Sync()
		}
	}()
	return func() {
		close(done)
		<-finished
		f.Close()
		os.Remove(f.Name())
	}
}

func micros(d time.Duration, n int) float64 { return float64(d.Microseconds()) / float64(n) }
