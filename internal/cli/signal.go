package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// interruptSignals are the signals that stop a run cleanly: Ctrl-C, kill,
// a closed terminal, and a closed pipe on the log (| head, a pager quit):
// left to the runtime, the last killed the process and left its temporary
// files behind.
var interruptSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE}

// DefaultGrace is how long a command may take to stop by itself after a
// signal before the temporary files are removed under it and the process
// exits.
const DefaultGrace = 5 * time.Second

// AtOnce is the grace of a command that cannot be stopped from outside:
// the first signal removes the temporary files and exits.
const AtOnce time.Duration = -1

// Interrupt stops a command that writes files when the user interrupts it
// (SIGINT, SIGTERM, SIGHUP, SIGPIPE): the first signal cancels Context, so the
// writers stop and remove their temporary files (or, with Files.Keep, keep
// them for --resume) and the command returns;
// Finish then says what was left unwritten and gives the exit status
// 128+signal (130, 143, 129, 141). If the command has not returned after its
// grace time, or a second signal comes, the temporary files of the outputs
// are removed and the process exits at once.
type Interrupt struct {
	program string
	grace   time.Duration
	files   *Files
	stderr  io.Writer
	ctx     context.Context
	cancel  context.CancelFunc
	sigs    chan os.Signal
	done    chan struct{}
	once    sync.Once

	mu   sync.Mutex
	sig  os.Signal // the first signal, nil while none came
	said bool      // the message was printed
	exit func(int) // os.Exit, replaced by tests
}

// CatchInterrupts starts catching the interrupt signals for a command about
// to write f's outputs; call it after f.Check, and Finish (or Stop) when
// the command is done. program prefixes the message ("gquant quantize");
// grace is how long the command gets to stop by itself (DefaultGrace, or
// AtOnce).
func (f *Files) CatchInterrupts(program string, stderr io.Writer, grace time.Duration) *Interrupt {
	return f.catchInterrupts(program, stderr, grace, os.Exit)
}

func (f *Files) catchInterrupts(program string, stderr io.Writer, grace time.Duration, exit func(int)) *Interrupt {
	it := &Interrupt{program: program, grace: grace, files: f, stderr: stderr, sigs: make(chan os.Signal, 2),
		done: make(chan struct{}), exit: exit}
	it.ctx, it.cancel = context.WithCancel(context.Background())
	signal.Notify(it.sigs, interruptSignals...)
	go it.watch()
	return it
}

// Context is cancelled by the first signal.
func (it *Interrupt) Context() context.Context { return it.ctx }

func (it *Interrupt) watch() {
	var timeout <-chan time.Time
	for {
		select {
		case <-it.done:
			return
		case s := <-it.sigs:
			it.mu.Lock()
			first := it.sig == nil
			if first {
				it.sig = s
			}
			it.mu.Unlock()
			if first && it.grace >= 0 {
				it.cancel()
				timeout = time.After(it.grace)
				continue
			}
			it.hardExit()
			return
		case <-timeout:
			it.hardExit()
			return
		}
	}
}

// hardExit removes this process's temporary files of the outputs, says what
// was left unwritten and exits, for a command that did not stop in time.
func (it *Interrupt) hardExit() {
	if !it.files.Keep {
		removeOwnTemps(it.files.written())
	}
	it.exit(it.report())
}

// Stop stops catching signals; a signal after it has its default effect.
func (it *Interrupt) Stop() {
	it.once.Do(func() {
		signal.Stop(it.sigs)
		close(it.done)
		it.cancel()
	})
}

// Signal returns the signal that interrupted the command, or nil.
func (it *Interrupt) Signal() os.Signal {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.sig
}

// Finish is called with the command's result. After a signal it removes
// what temporary files remain, prints what was written and what was left
// unwritten, and returns the exit status for the signal with true; the
// command's error is then a consequence of the interrupt and not printed.
// Without a signal it returns 0, false.
func (it *Interrupt) Finish() (status int, interrupted bool) {
	if it.Signal() == nil {
		it.Stop()
		return 0, false
	}
	it.Stop()
	if !it.files.Keep {
		removeOwnTemps(it.files.written())
	}
	return it.report(), true
}

// report prints the interrupt line once and returns the exit status.
func (it *Interrupt) report() int {
	it.mu.Lock()
	defer it.mu.Unlock()
	s := it.sig
	status := 128 + signalNumber(s)
	if it.said {
		return status
	}
	it.said = true
	written, unwritten := it.files.Written()
	msg := fmt.Sprintf("%s: interrupted by %s", it.program, signalName(s))
	switch {
	case len(unwritten) > 0 && it.files.Keep:
		msg += fmt.Sprintf("; not written: %s (temporary files kept: run the same command with --resume to continue)", strings.Join(unwritten, ", "))
	case len(unwritten) > 0:
		msg += fmt.Sprintf("; not written: %s (temporary files removed)", strings.Join(unwritten, ", "))
	}
	if len(written) > 0 {
		msg += fmt.Sprintf("; complete before the interrupt: %s", strings.Join(written, ", "))
	}
	fmt.Fprintln(it.stderr, msg)
	return status
}

func signalNumber(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 2
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
