package probe

// pageLen is the number of values in a page of a pages list.
const pageLen = 64

// pages is a list that grows a page of pageLen values at a time: an
// append never copies what is there (a slice that doubles leaves as much
// garbage as it keeps), and the list holds at most one page of room it
// does not use. A run keeps its chunk times and its ids in pages for as
// long as the stream lasts.
type pages[T any] struct {
	p []*[pageLen]T
	n int
}

func (l *pages[T]) len() int { return l.n }

func (l *pages[T]) append(v T) {
	if l.n == len(l.p)*pageLen {
		l.p = append(l.p, new([pageLen]T))
	}
	l.p[l.n/pageLen][l.n%pageLen] = v
	l.n++
}

// at returns a pointer to the value at index i < len.
func (l *pages[T]) at(i int) *T { return &l.p[i/pageLen][i%pageLen] }
