//go:build !unix

package main

import "time"

// processCPU returns 0: not measured on this system.
func processCPU() time.Duration { return 0 }

// loadAvg returns 0: not measured on this system.
func loadAvg() float64 { return 0 }
