package netlab

import (
	"container/heap"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Impairment is what the stage at a router's outside edge does to each
// packet, each way: a delay drawn uniformly from Delay-Jitter to
// Delay+Jitter (so packets may be reordered, as netem's jitter does) and
// a loss with probability Loss.
type Impairment struct {
	Delay, Jitter time.Duration
	Loss          float64
}

// On reports whether the stage changes anything.
func (m Impairment) On() bool { return m.Delay > 0 || m.Jitter > 0 || m.Loss > 0 }

func (m Impairment) String() string {
	if !m.On() {
		return "none"
	}
	return fmt.Sprintf("%v±%v %.0f%%", m.Delay, m.Jitter, 100*m.Loss)
}

// openTUN makes a TUN device named name (no packet information header) in
// the test process's network namespace and returns its file; the device
// goes away when the file is closed.
func openTUN(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var ifr [unix.IFNAMSIZ + 64]byte
	copy(ifr[:unix.IFNAMSIZ-1], name)
	*(*uint16)(unsafe.Pointer(&ifr[unix.IFNAMSIZ])) = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&ifr[0]))); e != 0 {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, e)
	}
	return os.NewFile(uintptr(fd), name), nil // non-blocking: reads go through Go's poller
}

// bridge joins two TUN devices, copying each packet from one to the other
// through an impairment stage. Close stops it.
type bridge struct {
	a, b    *os.File
	wg      sync.WaitGroup
	stopped atomic.Bool
	// Counters, each way: packets read and packets dropped on purpose.
	abIn, abLost, baIn, baLost atomic.Int64
}

// newBridge starts copying between a and b with imp each way; seed seeds
// the draws (one stream per direction).
func newBridge(a, b *os.File, imp Impairment, seed uint64) *bridge {
	br := &bridge{a: a, b: b}
	br.wg.Add(2)
	go br.pump(a, b, imp, rand.New(rand.NewPCG(seed, 1)), &br.abIn, &br.abLost)
	go br.pump(b, a, imp, rand.New(rand.NewPCG(seed, 2)), &br.baIn, &br.baLost)
	return br
}

// pump copies src to dst: each packet is dropped, or written once its
// delay has passed (a writer goroutine keeps the waiting packets in due
// order).
func (br *bridge) pump(src, dst *os.File, imp Impairment, rng *rand.Rand, in, lost *atomic.Int64) {
	defer br.wg.Done()
	w := newDelayWriter(dst)
	defer w.close()
	buf := make([]byte, 65536)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return // closed (or the namespace went away)
		}
		in.Add(1)
		if imp.Loss > 0 && rng.Float64() < imp.Loss {
			lost.Add(1)
			continue
		}
		d := imp.Delay
		if imp.Jitter > 0 {
			d += time.Duration(rng.Int64N(int64(2*imp.Jitter)+1)) - imp.Jitter
		}
		pkt := append([]byte(nil), buf[:n]...)
		if d <= 0 {
			w.now(pkt)
			continue
		}
		w.later(time.Now().Add(d), pkt)
	}
}

// Close stops copying and closes both devices.
func (br *bridge) Close() {
	if br.stopped.Swap(true) {
		return
	}
	_ = br.a.Close()
	_ = br.b.Close()
	br.wg.Wait()
}

// delayWriter writes packets to a device when they fall due.
type delayWriter struct {
	dst  *os.File
	mu   sync.Mutex
	q    dueHeap
	seq  uint64
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newDelayWriter(dst *os.File) *delayWriter {
	w := &delayWriter{dst: dst, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// now writes pkt at once, unless packets wait: then it queues behind the
// ones already due (no delay is not a way to overtake).
func (w *delayWriter) now(pkt []byte) {
	w.mu.Lock()
	empty := len(w.q) == 0
	w.mu.Unlock()
	if empty {
		_, _ = w.dst.Write(pkt)
		return
	}
	w.later(time.Now(), pkt)
}

func (w *delayWriter) later(at time.Time, pkt []byte) {
	w.mu.Lock()
	w.seq++
	heap.Push(&w.q, dueItem{at: at, seq: w.seq, pkt: pkt})
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *delayWriter) close() {
	close(w.stop)
	<-w.done
}

func (w *delayWriter) run() {
	defer close(w.done)
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait := time.Hour
		for {
			w.mu.Lock()
			if len(w.q) == 0 {
				w.mu.Unlock()
				break
			}
			if d := time.Until(w.q[0].at); d > 0 {
				wait = d
				w.mu.Unlock()
				break
			}
			it := heap.Pop(&w.q).(dueItem)
			w.mu.Unlock()
			if _, err := w.dst.Write(it.pkt); err != nil && errors.Is(err, os.ErrClosed) {
				return
			}
		}
		t.Reset(wait)
		select {
		case <-w.stop:
			return
		case <-w.wake:
		case <-t.C:
		}
	}
}

type dueItem struct {
	at  time.Time
	seq uint64
	pkt []byte
}

type dueHeap []dueItem

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = dueItem{}
	*h = old[:len(old)-1]
	return it
}
