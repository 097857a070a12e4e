package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// jsonLines is the read loop of the line-oriented modes (cel, filter, score): one JSON value per
// non-empty line of stdin, one JSON line of answer per input on stdout. A line that does not
// parse, and stdin that cannot be read, are answered with badInput's value; the latter returns 2.
func jsonLines[In any](stdin io.Reader, stdout io.Writer, answer func(In) any, badInput func(error) any) int {
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var req In
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			_ = enc.Encode(badInput(err))
			continue
		}
		_ = enc.Encode(answer(req))
	}
	if err := in.Err(); err != nil {
		_ = enc.Encode(badInput(err))
		return 2
	}
	return 0
}

// jsonLinesParallel is jsonLines answering up to `workers` lines at once, the answers still in
// input order: for answers that mostly wait (gang's schedulers wait for their informers).
func jsonLinesParallel[In any](stdin io.Reader, stdout io.Writer, workers int, answer func(In) any, badInput func(error) any) int {
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	slots := make(chan struct{}, workers)
	var answers []chan any
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		done := make(chan any, 1)
		answers = append(answers, done)
		var req In
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			done <- badInput(err)
			continue
		}
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			done <- answer(req)
		}()
	}
	for _, a := range answers {
		_ = enc.Encode(<-a)
	}
	if err := in.Err(); err != nil {
		_ = enc.Encode(badInput(err))
		return 2
	}
	return 0
}
