package open5e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Errors of a list fetch. Every one means the endpoint was not read
// completely, so nothing may be concluded from what is missing.
var (
	// ErrOffBase: a next link leaves the base URL's scheme, host or the
	// endpoint's path.
	ErrOffBase = errors.New("next link leaves the base URL")
	// ErrPageLoop: a next link points at a page already read.
	ErrPageLoop = errors.New("next links loop")
	// ErrTooManyPages: the endpoint has more pages than MaxPages.
	ErrTooManyPages = errors.New("too many pages")
	// ErrResponseTooLarge: a response is larger than MaxResponseBytes.
	ErrResponseTooLarge = errors.New("response too large")
	// ErrMalformed: a response is not the API's paginated JSON.
	ErrMalformed = errors.New("malformed response")
	// ErrIncomplete: the pages hold fewer records than their count says.
	ErrIncomplete = errors.New("incomplete list")
)

// HTTPError is an unexpected HTTP status, after any retries.
type HTTPError struct {
	URL        string
	StatusCode int
	// Body is the start of the response body.
	Body string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: status %d: %s", e.URL, e.StatusCode, e.Body)
}

// retryable marks an attempt's error as worth another attempt; after.
type retryable struct {
	err   error
	after time.Duration // Retry-After, when the server sent one
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// Observer is told about each page read and each failed attempt, e.g. to
// count them in metrics. status is ErrorStatus of the attempt's error.
type Observer interface {
	PageFetched(endpoint string)
	FetchFailed(endpoint, status string)
}

// ClientOptions tunes a Client. A nil *ClientOptions, and every zero field,
// means the default.
type ClientOptions struct {
	// HTTPClient does the requests; default a client with no overall timeout
	// (RequestTimeout bounds each request).
	HTTPClient *http.Client
	// PageSize is sent as the "limit" parameter; default 100; negative
	// sends none (the API's default, 50).
	PageSize int
	// RequestTimeout bounds one request, reading its body included;
	// default 30s.
	RequestTimeout time.Duration
	// MaxPages bounds the pages of one endpoint; default 1000.
	MaxPages int
	// MaxResponseBytes bounds one response body; default 32 MiB.
	MaxResponseBytes int64
	// Retries is the number of attempts after the first on a timeout, a
	// connection error, a 5xx, a 429 or a garbled body; default 4.
	Retries int
	// BackoffBase is the wait before the first retry, doubled for each
	// further one, with jitter; default 500ms.
	BackoffBase time.Duration
	// BackoffMax caps one wait; default 30s.
	BackoffMax time.Duration
	// MaxRetryAfter caps the wait a 429's Retry-After asks for; default 2m.
	MaxRetryAfter time.Duration
	// UserAgent; default "lorekeeper-ingest".
	UserAgent string
	Observer  Observer
	Logger    *slog.Logger
}

// Client reads paginated lists from an Open5e API at a base URL.
type Client struct {
	base *url.URL
	opts ClientOptions
}

// NewClient returns a client for the API at baseURL, e.g.
// "https://api.open5e.com" or a snapshot server's URL.
func NewClient(baseURL string, opts *ClientOptions) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("parse open5e base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("open5e base URL %q: want http(s)://host[/path]", baseURL)
	}
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.PageSize == 0 {
		o.PageSize = 100
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.MaxPages <= 0 {
		o.MaxPages = 1000
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = 32 << 20
	}
	if o.Retries == 0 {
		o.Retries = 4
	}
	if o.Retries < 0 {
		o.Retries = 0
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 500 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 2 * time.Minute
	}
	if o.UserAgent == "" {
		o.UserAgent = "lorekeeper-ingest"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Client{base: u, opts: o}, nil
}

// BaseURL is the base URL the client reads from.
func (c *Client) BaseURL() string { return c.base.String() }

// Page describes one page read.
type Page struct {
	// Path is the endpoint's path, "/v2/spells/".
	Path string
	// Number counts pages from 1.
	Number int
	// Count is the total the API announced.
	Count int
	// Records is the number of records read so far, this page included.
	Records int
	Bytes   int
}

// List reads every record of the list endpoint at path ("/v2/spells/"),
// following next links while they stay on the base URL and the endpoint.
// onPage, if not nil, is called after each page. On error the records read
// before it are returned with it.
func (c *Client) List(ctx context.Context, path string, onPage func(Page)) ([]json.RawMessage, error) {
	start := *c.base
	start.Path = c.base.Path + path
	if c.opts.PageSize > 0 {
		start.RawQuery = url.Values{"limit": {strconv.Itoa(c.opts.PageSize)}}.Encode()
	}
	next := start.String()
	seen := map[string]bool{}
	var (
		records []json.RawMessage
		count   = -1
	)
	for n := 1; next != ""; n++ {
		if n > c.opts.MaxPages {
			return records, fmt.Errorf("list %s: %w: more than %d", path, ErrTooManyPages, c.opts.MaxPages)
		}
		if seen[next] {
			return records, fmt.Errorf("list %s: %w: %s again", path, ErrPageLoop, next)
		}
		seen[next] = true
		page, err := c.get(ctx, path, next)
		if err != nil {
			return records, err
		}
		if page.Count != nil {
			count = *page.Count
		}
		for _, r := range page.Results {
			records = append(records, c.canonical(r))
		}
		if c.opts.Observer != nil {
			c.opts.Observer.PageFetched(path)
		}
		if onPage != nil {
			onPage(Page{Path: path, Number: n, Count: max(count, 0), Records: len(records), Bytes: page.bytes})
		}
		cur := next
		next = ""
		if page.Next != nil && *page.Next != "" {
			u, err := c.follow(cur, *page.Next, path)
			if err != nil {
				if c.opts.Observer != nil {
					c.opts.Observer.FetchFailed(path, ErrorStatus(err))
				}
				return records, fmt.Errorf("list %s: %w", path, err)
			}
			next = u
		}
	}
	if count >= 0 && len(records) != count {
		return records, fmt.Errorf("list %s: %w: read %d of %d", path, ErrIncomplete, len(records), count)
	}
	return records, nil
}

// follow resolves a next link and checks it stays on the base URL's scheme
// and host and under the endpoint's path.
func (c *Client) follow(current, next, path string) (string, error) {
	cur, _ := url.Parse(current)
	u, err := cur.Parse(next)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrOffBase, next, err)
	}
	if u.Scheme != c.base.Scheme || u.Host != c.base.Host || !strings.HasPrefix(u.Path, c.base.Path+path) || u.User != nil {
		return "", fmt.Errorf("%w: %s", ErrOffBase, u.Redacted())
	}
	u.Fragment = ""
	return u.String(), nil
}

// canonical points the links a mirror rewrote back at the public API, so
// a record's content does not depend on where it was read.
func (c *Client) canonical(r json.RawMessage) json.RawMessage {
	base := c.base.String()
	if base == CanonicalOrigin || !bytes.Contains(r, []byte(base)) {
		return r
	}
	return bytes.ReplaceAll(r, []byte(base), []byte(CanonicalOrigin))
}

// page is one decoded page of a list.
type page struct {
	Count   *int              `json:"count"`
	Next    *string           `json:"next"`
	Results []json.RawMessage `json:"results"`
	bytes   int
}

// get reads one page with retries.
func (c *Client) get(ctx context.Context, path, u string) (*page, error) {
	var last error
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		body, err := c.attempt(ctx, u)
		if err == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.opts.Observer != nil {
			c.opts.Observer.FetchFailed(path, ErrorStatus(err))
		}
		last = err
		var r *retryable
		if !errors.As(err, &r) || attempt >= c.opts.Retries {
			break
		}
		wait := c.backoff(attempt)
		if r.after > 0 {
			wait = max(wait, min(r.after, c.opts.MaxRetryAfter))
		}
		c.opts.Logger.Debug("open5e fetch failed, retrying", "url", u, "attempt", attempt+1, "wait", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	var r *retryable
	if errors.As(last, &r) {
		last = r.err
	}
	return nil, fmt.Errorf("get %s: %w", u, last)
}

// backoff is the exponential wait before retry attempt+1, with jitter
// between half and all of it so that clients restarted together spread out.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.opts.BackoffBase << min(attempt, 20)
	if d <= 0 || d > c.opts.BackoffMax {
		d = c.opts.BackoffMax
	}
	return d/2 + rand.N(d/2+1)
}

func (c *Client) attempt(ctx context.Context, u string) (*page, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.opts.UserAgent)
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, &retryable{err: err}
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.opts.MaxResponseBytes {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrResponseTooLarge, resp.ContentLength, c.opts.MaxResponseBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxResponseBytes+1))
	if err != nil {
		// A body cut short (the connection dropped, the timeout hit).
		return nil, &retryable{err: fmt.Errorf("read body: %w", err)}
	}
	if int64(len(body)) > c.opts.MaxResponseBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrResponseTooLarge, c.opts.MaxResponseBytes)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, &retryable{err: statusError(u, resp, body), after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	case resp.StatusCode >= 500:
		return nil, &retryable{err: statusError(u, resp, body), after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	default:
		return nil, statusError(u, resp, body)
	}
	p := &page{bytes: len(body)}
	if err := json.Unmarshal(body, p); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			// Well-formed JSON of the wrong shape: retrying will not help.
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		// Garbled or truncated on the way: worth another try.
		return nil, &retryable{err: fmt.Errorf("%w: %v", ErrMalformed, err)}
	}
	if p.Results == nil {
		return nil, fmt.Errorf("%w: no results list", ErrMalformed)
	}
	return p, nil
}

func statusError(u string, resp *http.Response, body []byte) error {
	b := string(body)
	if len(b) > 200 {
		b = b[:200]
	}
	return &HTTPError{URL: u, StatusCode: resp.StatusCode, Body: b}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ErrorStatus is a short label for what went wrong, for metrics and state:
// the HTTP status code ("503", "429"), or "timeout", "connection",
// "malformed", "too_large", "off_base", "loop", "too_many_pages",
// "incomplete", "canceled", "other".
func ErrorStatus(err error) string {
	var he *HTTPError
	var ne net.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &he):
		return strconv.Itoa(he.StatusCode)
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrResponseTooLarge):
		return "too_large"
	case errors.Is(err, ErrOffBase):
		return "off_base"
	case errors.Is(err, ErrPageLoop):
		return "loop"
	case errors.Is(err, ErrTooManyPages):
		return "too_many_pages"
	case errors.Is(err, ErrIncomplete):
		return "incomplete"
	case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection"
	}
	var r *retryable
	if errors.As(err, &r) {
		return "connection"
	}
	return "other"
}
