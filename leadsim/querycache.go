package leadsim

import (
	"container/list"
	"context"
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
)

// queryCache is a bounded least-recently-used cache of parsed and
// validated GraphQL documents, keyed by the query text, so a document sent
// again is not parsed again. It implements gqlgen's graphql.Cache and is
// safe for concurrent use. (gqlgen's own lru package would add the
// hashicorp/golang-lru module to go.mod; this is the same idea in 50 lines.)
type queryCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front: most recent; values are *cacheEntry
	items map[string]*list.Element
}

type cacheEntry struct {
	key string
	doc *ast.QueryDocument
}

func newQueryCache(size int) *queryCache {
	return &queryCache{size: size, order: list.New(), items: make(map[string]*list.Element, size)}
}

// Get returns the document of query, if cached.
func (c *queryCache) Get(_ context.Context, query string) (*ast.QueryDocument, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[query]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).doc, true
}

// Add caches the document of query, evicting the least recently used one
// when full.
func (c *queryCache) Add(_ context.Context, query string, doc *ast.QueryDocument) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[query]; ok {
		el.Value.(*cacheEntry).doc = doc
		c.order.MoveToFront(el)
		return
	}
	c.items[query] = c.order.PushFront(&cacheEntry{key: query, doc: doc})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}
