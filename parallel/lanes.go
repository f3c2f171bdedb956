package parallel

// lane is one key's queue: its entries run one at a time, in the order
// read. Only the claim's goroutine uses it.
type lane struct {
	key     string
	waiting []*entry // read, not started; the first starts when running ends
	running bool
}

// lanes are the lanes of a claim's keys with work held, plus the lane of
// messages without a key under NilKeyInOrder. A lane is dropped once it
// has nothing waiting or running, so the map holds at most MaxInFlight
// lanes.
type lanes struct {
	byKey  map[string]*lane
	nilKey lane
}

func newLanes() *lanes { return &lanes{byKey: make(map[string]*lane)} }

// of returns the lane for key (nil: the message has no key), creating it;
// nil when the message runs on its own.
func (l *lanes) of(key []byte, order NilKeyOrder) *lane {
	if key == nil {
		if order == NilKeyAnyOrder {
			return nil
		}
		return &l.nilKey
	}
	ln := l.byKey[string(key)]
	if ln == nil {
		ln = &lane{key: string(key)}
		l.byKey[ln.key] = ln
	}
	return ln
}

// release drops ln when it has no work left.
func (l *lanes) release(ln *lane) {
	if ln != &l.nilKey && !ln.running && len(ln.waiting) == 0 {
		delete(l.byKey, ln.key)
	}
}
