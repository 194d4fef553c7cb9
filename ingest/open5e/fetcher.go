// The Fetcher keeps LoreKeeper's copy of Open5e complete and current: on
// a schedule or on demand it reads every endpoint, publishes
// upserts for new and changed entities and, after a complete fetch,
// tombstones for entities no longer listed, with its state in the
// LOREKEEPER_STATE key-value bucket so that any ingest process can resume.

package open5e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"lorekeeper.dev/ingest/srd52"
)

// LiveURL is the public Open5e API, the default base URL.
const LiveURL = CanonicalOrigin

// Options tunes a Fetcher. A nil *Options, and every zero field, means the
// default.
type Options struct {
	// Client tunes the HTTP reads (page size, timeouts, retries, bounds).
	Client *ClientOptions
	// Interval between scheduled runs; default 24h; negative: no schedule,
	// Run syncs only when triggered (and retries failed endpoints).
	Interval time.Duration
	// Jitter: each wait is Interval plus up to Jitter; default Interval/10.
	Jitter time.Duration
	// EndpointBackoff is how long an endpoint whose fetch failed (after the
	// client's retries) is left alone; default 5m.
	EndpointBackoff time.Duration
	// StreamRetry is how soon Run tries again the endpoints that Open5e
	// answered but NATS did not take whole (publish acks or the state
	// write failed: say, the NATS server this process uses went down and
	// the client moved to another); default 15s.
	StreamRetry time.Duration
	// LeaseTTL is how long the resync lease lasts without renewal; the run
	// renews it every LeaseTTL/3. Default 2m.
	LeaseTTL time.Duration
	// Holder names this process in the lease; default host-pid-random.
	Holder string
	// Node names this node across restarts (say, host and data directory):
	// a lease that a process of the same Node left behind is from a run
	// that crashed, and does not block. Empty: only the holder's absence
	// (it no longer answers on NATS) or the lease's expiry frees it.
	Node string
	// Endpoints to sync; default Endpoints(), then TextEndpoint when Text
	// is set.
	Endpoints []Endpoint
	// Text, if set, is SRD 5.2's own text (srd52), which completes
	// Open5e's records of SRD 5.2 and fills their gaps: each run reads it
	// and gives each v2 endpoint's SRD 5.2 entities what the text states
	// and they lack (srd52.Book.Complete); TextEndpoint, last among
	// Endpoints, syncs the text's own entities, those Open5e lacks
	// (srd52.Book.Entities).
	Text *srd52.Source
	// Progress, if not nil, is called from the syncing goroutine after each
	// page and when each endpoint is done; it must return quickly.
	Progress func(Progress)
	Metrics  *Metrics
	Logger   *slog.Logger
}

// Progress reports where a run is: a progress bar draws Endpoint with
// Done of Total.
type Progress struct {
	// Endpoint is the path, "/v2/spells/".
	Endpoint string
	// Done is the number of records read so far; Total the count the API
	// announced (0 while unknown).
	Done, Total int
	// Page is the last page read.
	Page int
	// Index counts endpoints from 1 to Endpoints.
	Index, Endpoints int
	// Finished is set on the last report of an endpoint, with its Summary.
	Finished bool
	Summary  *EndpointSummary
}

// EndpointSummary is what one run did for one endpoint.
type EndpointSummary struct {
	Endpoint                                          string
	Fetched, New, Changed, Removed, Unchanged, Errors int
	Pages                                             int
	// Repaired counts the entities the stream held other content of than
	// the source, whatever the state said (streamContent), published
	// again; they are among New or Changed. For the total, also the keys
	// the stream held that no endpoint lists, tombstoned.
	Repaired int
	// Skipped is set when the endpoint was left alone (backoff after
	// failures).
	Skipped bool
	// Err is why the endpoint was not read completely (or published), if so.
	Err error
	// StreamFailed: Open5e was read, and the failure was NATS's alone (a
	// publish, a tombstone or the state write), so a retry soon may pass.
	StreamFailed bool
}

// String is the one-line summary people read.
func (s EndpointSummary) String() string {
	if s.Skipped {
		return fmt.Sprintf("%s: skipped (%v)", s.Endpoint, s.Err)
	}
	line := fmt.Sprintf("%s: fetched %d, new %d, changed %d, removed %d, unchanged %d, errors %d",
		s.Endpoint, s.Fetched, s.New, s.Changed, s.Removed, s.Unchanged, s.Errors)
	if s.Repaired > 0 {
		line += fmt.Sprintf(", repaired %d", s.Repaired)
	}
	if s.Err != nil {
		line += fmt.Sprintf(" (%v)", s.Err)
	}
	return line
}

// Summary is what one run did.
type Summary struct {
	Started   time.Time
	Duration  time.Duration
	Endpoints []EndpointSummary
	// Unlisted counts the Open5e keys the stream held that no endpoint
	// lists (published by something else than this resync), tombstoned.
	Unlisted int
}

// Lines is the one-line summary of each endpoint, then the total.
func (s Summary) Lines() []string {
	out := make([]string, 0, len(s.Endpoints)+1)
	for _, e := range s.Endpoints {
		out = append(out, e.String())
	}
	t := s.Totals()
	return append(out, fmt.Sprintf("%s in %s", t, s.Duration.Round(time.Millisecond)))
}

// Totals adds up the endpoints.
func (s Summary) Totals() EndpointSummary {
	t := EndpointSummary{Endpoint: "total"}
	for _, e := range s.Endpoints {
		t.Fetched += e.Fetched
		t.New += e.New
		t.Changed += e.Changed
		t.Removed += e.Removed
		t.Unchanged += e.Unchanged
		t.Errors += e.Errors
		t.Pages += e.Pages
		t.Repaired += e.Repaired
	}
	t.Repaired += s.Unlisted
	return t
}

// Fetcher resyncs Open5e into the ENTITIES stream. The stream and the state
// bucket must exist (ingest.EnsureResources).
type Fetcher struct {
	js      jetstream.JetStream
	baseURL string
	opts    Options
	client  *Client
	log     *slog.Logger

	running sync.Mutex // one run at a time in this process
	trigger chan struct{}
}

// NewFetcher returns a fetcher reading the API at baseURL (LiveURL
// when empty) and publishing through js. A base URL the client cannot use
// is an error here, not a fetcher that never syncs.
func NewFetcher(js jetstream.JetStream, baseURL string, opts *Options) (*Fetcher, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if baseURL == "" {
		baseURL = LiveURL
	}
	if o.Interval == 0 {
		o.Interval = 24 * time.Hour
	}
	if o.Jitter == 0 && o.Interval > 0 {
		o.Jitter = o.Interval / 10
	}
	if o.EndpointBackoff <= 0 {
		o.EndpointBackoff = 5 * time.Minute
	}
	if o.StreamRetry <= 0 {
		o.StreamRetry = 15 * time.Second
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 2 * time.Minute
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Holder = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if len(o.Endpoints) == 0 {
		o.Endpoints = Endpoints()
		if o.Text != nil {
			o.Endpoints = append(o.Endpoints, TextEndpoint)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var co ClientOptions
	if o.Client != nil {
		co = *o.Client
	}
	if co.Observer == nil && o.Metrics != nil {
		co.Observer = o.Metrics
	}
	if co.Logger == nil {
		co.Logger = o.Logger
	}
	client, err := NewClient(baseURL, &co)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(o.Endpoints))
	for i, ep := range o.Endpoints {
		paths[i] = ep.Path()
	}
	o.Metrics.initEndpoints(paths)
	return &Fetcher{
		js: js, baseURL: baseURL, opts: o, client: client,
		log: o.Logger, trigger: make(chan struct{}, 1),
	}, nil
}
