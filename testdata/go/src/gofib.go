// gofib: a Go program for source lines (issue 22, item 10): Go writes no .debug_aranges.

package main

import (
	"fmt"
	"os"
)

//go:noinline
func spin(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i % 7
	}
	return s
}

func main() {
	n := 300000000
	if len(os.Args) > 1 {
		fmt.Sscan(os.Args[1], &n)
	}
	fmt.Println(spin(n))
}
