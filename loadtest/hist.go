package main

import (
	"math/bits"
	"time"
)

// histSub is how many buckets each power of two of microseconds splits
// into: a quantile read off the histogram is within 1/histSub (1.6 %) of
// the sample's value.
const histSub = 64

// hist counts latencies in log-linear buckets of microseconds: a fixed
// 16 KiB per room, whatever the run's length, where a slice of every
// sample grew to hundreds of megabytes and its copying took 5 % of the
// process's time.
type hist struct {
	counts [64 * histSub]uint32
	n      int
	max    time.Duration
}

// bucket is the index of d's bucket.
func bucket(d time.Duration) int {
	us := uint64(max(0, d) / time.Microsecond)
	if us < histSub {
		return int(us)
	}
	e := bits.Len64(us) - 7 // us >> e falls in [histSub, 2*histSub)
	return (e+1)*histSub + int(us>>e) - histSub
}

// lower is the smallest value of bucket i.
func lower(i int) time.Duration {
	if i < histSub {
		return time.Duration(i) * time.Microsecond
	}
	e := i/histSub - 1
	return time.Duration(uint64(histSub+i%histSub)<<e) * time.Microsecond
}

func (h *hist) add(d time.Duration) {
	h.counts[bucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// quantile returns the q quantile (0 < q <= 1) as its bucket's lower
// bound, or the largest sample for the top one.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int(q*float64(h.n) + 0.999999) // the ceil of q*n, as a sorted index + 1
	rank = min(max(rank, 1), h.n)
	if rank == h.n {
		return h.max
	}
	seen := 0
	for i, c := range h.counts {
		seen += int(c)
		if seen >= rank {
			return min(lower(i), h.max)
		}
	}
	return h.max
}
