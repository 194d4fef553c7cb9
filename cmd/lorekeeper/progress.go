package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progressBar draws a one-line bar on a terminal and stays silent
// elsewhere (logs and pipes get the per-step summaries instead).
type progressBar struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	label   string
	done    int
	total   int
	last    time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, enabled: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// set updates the bar; total 0 means unknown.
func (p *progressBar) set(label string, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.label, p.done, p.total = label, done, total
	if !p.enabled || time.Since(p.last) < 100*time.Millisecond && done != total {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *progressBar) draw() {
	const width = 30
	bar := strings.Repeat("·", width)
	count := fmt.Sprintf("%d", p.done)
	if p.total > 0 {
		n := min(width, p.done*width/p.total)
		bar = strings.Repeat("█", n) + strings.Repeat("·", width-n)
		count = fmt.Sprintf("%d/%d", p.done, p.total)
	}
	fmt.Fprintf(p.w, "\r\033[K%-28s %s %s", truncate(p.label, 28), bar, count)
}

// finish clears the bar.
func (p *progressBar) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enabled {
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.label = ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}
