// Command golib is a tiny Go c-shared library standing in for "another
// Go-built GDExtension" in the two-Go-runtimes test (goruntimes_test.go):
// its one export keeps its runtime busy with goroutines, allocation, GC,
// channels, timers and CPU-bound loops that need async preemption.
package main

import "C"

import (
	"runtime"
	"sync"
	"time"
)

// golib_stress runs workers goroutines for rounds rounds and returns a
// checksum that depends only on its arguments.
//
//export golib_stress
func golib_stress(workers, rounds C.int) C.longlong {
	var total int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	ch := make(chan int, 16)
	for w := range int(workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum int64
			for r := range int(rounds) {
				m := make(map[int][]byte)
				for i := range 200 {
					m[i] = make([]byte, 64+i)
				}
				for _, b := range m {
					sum += int64(len(b))
				}
				x := uint64(w*rounds_mix + r)
				for range 200000 { // a tight loop: preempted by signal
					x = x*6364136223846793005 + 1442695040888963407
				}
				if x == 0 {
					sum++ // never: keeps the loop
				}
				select {
				case ch <- r:
				default:
				}
				if r%8 == 0 {
					runtime.GC()
					time.Sleep(time.Millisecond)
				}
			}
			mu.Lock()
			total += sum
			mu.Unlock()
		}()
	}
	go func() {
		for range ch {
		}
	}()
	wg.Wait()
	close(ch)
	return C.longlong(total)
}

const rounds_mix = 7919

func main() {}
