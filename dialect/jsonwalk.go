package dialect

// The walkers below are the one loop every decoder shares: an object's
// members matched against the field names a decoder reads (the others
// skipped), an array's elements into a reused jslice, and an object field
// that a Go pointer would hold (null clears it). A decoder says only what
// each of its fields is; the callbacks do not escape, so they cost no
// allocation.

// members walks the members of the object whose '{' begin has consumed:
// a member whose key matches names[k] (see match) is decoded by field(k),
// any other is skipped.
func (s *jscan) members(names []string, field func(k int) bool) bool {
	for first := true; ; first = false {
		key, done, ok := s.member(first)
		if !ok || done {
			return ok
		}
		if k := match(key, names); k >= 0 {
			ok = field(k)
		} else {
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

// object decodes the object field parent.name (a struct field: null leaves
// it as it was) by members.
func (s *jscan) object(parent, name string, names []string, field func(k int) bool) bool {
	if st, ok := s.begin('{', parent, name, "an object"); st != isOpen || !ok {
		return ok
	}
	return s.members(names, field)
}

// pointer decodes the object field parent.name that a Go pointer would
// hold, into v: null sets v to its zero value (set false), an object sets
// *set and decodes its members into v.
func pointer[T any](s *jscan, v *T, set *bool, parent, name string, names []string, field func(k int) bool) bool {
	st, ok := s.begin('{', parent, name, "an object")
	if st == isNull {
		var zero T
		*v = zero
	}
	if st != isOpen || !ok {
		return ok
	}
	*set = true
	return s.members(names, field)
}

// array decodes the array field parent.name into q, elem(i) decoding
// element i into the reused q.elem(i); null empties q (a slice set to nil).
// elem takes an index, not the element: a pointer passed through a func
// value escapes, and with it the decoder holding q.
func array[T any](s *jscan, q *jslice[T], parent, name string, elem func(i int) bool) bool {
	st, ok := s.begin('[', parent, name, "an array")
	if st == isNull {
		q.reset()
	}
	if st != isOpen || !ok {
		return ok
	}
	for i, first := 0, true; ; i, first = i+1, false {
		done, ok := s.elem(first)
		if !ok {
			return false
		}
		if done {
			q.end(i)
			return true
		}
		if !elem(i) {
			return false
		}
	}
}
