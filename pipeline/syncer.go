package pipeline

import (
	"fmt"
	"os"
	"runtime"
)

// syncer makes finished tensors durable off the writer's goroutine. An
// fsync waits for the disk (on the shared two-core VM of our measurements
// the 205 of a Q8_0 run of the medium model took 2.4 s of its 9.9 s); done
// by the writer, it stopped every write meanwhile, and the workers too once
// the memory budget filled. The syncer takes, in the writer's order, each finished
// tensor and each progress event: it fsyncs the output through a handle
// of its own (gguf.Writer is not safe for concurrent use; an fsync
// flushes the file whichever handle asks), then appends the tensor's
// record to the progress journal, and only then reports the event, so a
// tensor reported Finished is always one --resume finds. At most
// syncBehind finished tensors wait for it: an interrupt is not kept
// waiting for a long queue of fsyncs, and when the disk is slower than the
// run, the hasher, and the writer behind it, wait for it after all.
type syncer struct {
	queue    chan syncItem
	behind   chan struct{} // a token per finished tensor queued
	files    []*os.File    // per output: the temporary file, for fsync; nil where not written
	journals []*journal
	outs     []Output
	progress func(Event)
	cancel   func()
	done     chan struct{}
	err      error // the first failure; read after done is closed
}

// syncItem is a finished tensor's record to make durable (rec set), a
// progress event (ev set), or both.
type syncItem struct {
	out int
	rec *TensorRecord // a copy
	ev  *Event
}

// newSyncer opens a handle on each writer's temporary file and starts the
// syncer; the caller closes it with stop.
func newSyncer(temps []string, journals []*journal, outs []Output, progress func(Event), cancel func()) (*syncer, error) {
	s := &syncer{queue: make(chan syncItem, 4096), behind: make(chan struct{}, syncBehind), files: make([]*os.File, len(temps)), journals: journals,
		outs: outs, progress: progress, cancel: cancel, done: make(chan struct{})}
	// Windows flushes only through a handle that may write; elsewhere a
	// handle that may only read does, and needs no write permission.
	flag := os.O_RDONLY
	if runtime.GOOS == "windows" {
		flag = os.O_WRONLY
	}
	for i, tmp := range temps {
		if tmp == "" {
			continue
		}
		f, err := os.OpenFile(tmp, flag, 0)
		if err != nil {
			s.closeFiles()
			return nil, fmt.Errorf("%s: opening %s to flush it: %w", outs[i].Path, tmp, err)
		}
		s.files[i] = f
	}
	go s.run()
	return s, nil
}

// syncBehind is how many finished tensors may wait for the syncer.
const syncBehind = 2

// add queues an item, waiting while syncBehind finished tensors wait.
func (s *syncer) add(it syncItem) {
	if it.rec != nil {
		s.behind <- struct{}{}
	}
	s.queue <- it
}

func (s *syncer) run() {
	defer close(s.done)
	for it := range s.queue {
		s.handle(it)
		if it.rec != nil {
			<-s.behind
		}
	}
}

// handle makes it.rec durable and reports it.ev, unless the syncer failed
// before.
func (s *syncer) handle(it syncItem) {
	if s.err != nil {
		return
	}
	if it.rec != nil {
		// The bytes first, then the record that claims them.
		err := s.files[it.out].Sync()
		if err == nil {
			if err = s.journals[it.out].add(*it.rec); err != nil {
				err = fmt.Errorf("%s: progress record: %w", s.outs[it.out].Path, err)
			}
		}
		if err != nil {
			s.err = err
			s.cancel()
			return
		}
	}
	if it.ev != nil && s.progress != nil {
		s.progress(*it.ev)
	}
}

// stop waits for everything queued to be done, closes the handles and
// returns the first failure. The journals are the caller's again.
func (s *syncer) stop() error {
	close(s.queue)
	<-s.done
	s.closeFiles()
	return s.err
}

func (s *syncer) closeFiles() {
	for _, f := range s.files {
		if f != nil {
			f.Close()
		}
	}
}
