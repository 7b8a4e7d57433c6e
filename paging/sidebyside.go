package paging

import "sync"

// SideBySide runs lists of different kinds at once: the API server
// encodes one kind while this process decodes another. Wait gives the
// first failure in the order the lists were started, whichever failed
// first: the same failures, the same answer.
type SideBySide struct {
	wg   sync.WaitGroup
	errs []*error
}

// Go starts list.
func (s *SideBySide) Go(list func() error) {
	err := new(error)
	s.errs = append(s.errs, err)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		*err = list()
	}()
}

// Wait waits for every list started.
func (s *SideBySide) Wait() error {
	s.wg.Wait()
	for _, err := range s.errs {
		if *err != nil {
			return *err
		}
	}
	return nil
}
