package query

import (
	"container/list"
	"sync"
)

// vectorCache keeps the most recently used query vectors by query text.
// A nil *vectorCache caches nothing.
type vectorCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front: most recent; values are *cacheEntry
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key string
	vec []float32
}

func newVectorCache(size int) *vectorCache {
	if size <= 0 {
		return nil
	}
	return &vectorCache{size: size, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *vectorCache) get(key string) ([]float32, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).vec, true
}

func (c *vectorCache) put(key string, vec []float32) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*cacheEntry).vec = vec
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, vec: vec})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*cacheEntry).key)
	}
}
