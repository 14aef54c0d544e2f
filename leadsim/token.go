package leadsim

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
)

// principal is the verified identity of a GraphQL request: the client the
// token was issued to.
type principal struct {
	client     *Client
	canWrite   bool
	canRead    bool
	expires    time.Time
	notBefore  time.Time
	generation uint64
	revision   int64 // the sessions revision it was issued at (Server.revision)
}

// maxVerifiedTokens bounds the cache of verified tokens.
const maxVerifiedTokens = 10000

// keyring holds the signing key and the cache of verified tokens. A key
// rotation replaces the key and empties the cache, which revokes every
// token issued before it.
type keyring struct {
	mu         sync.RWMutex
	key        *rsa.PrivateKey
	generation uint64
	verified   map[string]*principal
}

func newKeyring(key *rsa.PrivateKey) (*keyring, error) {
	k := &keyring{}
	if key == nil {
		if err := k.rotate(); err != nil {
			return nil, err
		}
		return k, nil
	}
	k.key, k.generation, k.verified = key, 1, map[string]*principal{}
	return k, nil
}

func (k *keyring) rotate() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate token signing key: %w", err)
	}
	k.mu.Lock()
	k.key = key
	k.generation++
	k.verified = map[string]*principal{}
	k.mu.Unlock()
	return nil
}

func (k *keyring) current() (*rsa.PrivateKey, uint64) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.key, k.generation
}

// issuer is the iss claim of tokens of the tenant.
func issuer(tenant string) string { return "https://sts.leadsim.local/" + tenant + "/" }

// issue signs an access token for c.
func (s *Server) issue(c *Client) (string, error) {
	key, gen := s.keys.current()
	now := s.opts.Now()
	s.rolesMu.RLock()
	roles := slices.Clone(c.Roles)
	s.rolesMu.RUnlock()
	claims := jwt.MapClaims{
		"iss":   issuer(s.opts.TenantID),
		"aud":   s.opts.AppID,
		"tid":   s.opts.TenantID,
		"sub":   c.ID,
		"azp":   c.ID,
		"appid": c.ID,
		"roles": roles,
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   expiry(now, s.opts.TokenLifetime),
		"jti":   uuid.NewString(),
		"rev":   s.revision.Load(), // sessions revoked (revokeWrite) end tokens of older revisions
		"ver":   "2.0",
	}
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	t.Header["kid"] = strconv.FormatUint(gen, 10)
	signed, err := t.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign access token for client %q: %w", c.ID, err)
	}
	return signed, nil
}

// expiry is the exp claim of a token issued at now: now + lifetime rounded
// up to the second, so the token lives at least expires_in seconds from the
// answer, as a client that counts from the answer expects. (Rounding down
// would cut up to a second off, which matters with the few-second tokens of
// tests.)
func expiry(now time.Time, lifetime time.Duration) int64 {
	end := now.Add(lifetime)
	if end.Truncate(time.Second).Equal(end) {
		return end.Unix()
	}
	return end.Unix() + 1
}

// authenticate returns the principal of the request's bearer token, or nil
// when the token is missing, forged, expired, not yet valid, issued for
// another audience or signed by a rotated key. Verified tokens are cached
// per key generation so RSA verification is paid once per token.
func (s *Server) authenticate(r *http.Request) *principal {
	h := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return nil
	}
	raw := strings.TrimSpace(h[len(prefix):])
	now := s.opts.Now()
	s.keys.mu.RLock()
	p, gen, key := s.keys.verified[raw], s.keys.generation, s.keys.key
	s.keys.mu.RUnlock()
	if p == nil {
		p = s.verify(raw, &key.PublicKey, gen)
		if p == nil {
			return nil
		}
		s.keys.mu.Lock()
		if s.keys.generation == gen {
			if len(s.keys.verified) >= maxVerifiedTokens {
				clear(s.keys.verified) // expired tokens pile up in a long run; valid ones are verified again
			}
			s.keys.verified[raw] = p
		}
		s.keys.mu.Unlock()
	}
	if p.generation != gen || p.revision < s.revision.Load() || now.After(p.expires) || now.Before(p.notBefore) {
		return nil
	}
	return p
}

// verify checks a token's signature and claims.
func (s *Server) verify(raw string, pub *rsa.PublicKey, gen uint64) *principal {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims,
		func(*jwt.Token) (any, error) { return pub, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodRS256.Alg()}),
		jwt.WithAudience(s.opts.AppID),
		jwt.WithIssuer(issuer(s.opts.TenantID)),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.opts.Now),
	)
	if err != nil {
		return nil
	}
	azp, _ := claims["azp"].(string)
	c := s.clients[azp]
	if c == nil {
		return nil
	}
	exp, err1 := claims.GetExpirationTime()
	nbf, err2 := claims.GetNotBefore()
	if err1 != nil || err2 != nil || exp == nil {
		return nil
	}
	p := &principal{client: c, expires: exp.Time, generation: gen}
	if rev, ok := claims["rev"].(float64); ok {
		p.revision = int64(rev)
	}
	if nbf != nil {
		p.notBefore = nbf.Time
	}
	roles, _ := claims["roles"].([]any)
	for _, r := range roles {
		switch r {
		case RoleWrite:
			p.canWrite = true
		case RoleRead:
			p.canRead = true
		}
	}
	return p
}

// tokenError is an error answer of the identity provider, in the shape of
// the Microsoft identity platform's v2.0 token endpoint.
type tokenError struct {
	status int
	kind   string // the OAuth error value, also the Stats rejection kind
	code   int    // AADSTS code
	desc   string // description without the AADSTS prefix
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	status := http.StatusOK
	op := OpToken
	cw := &countingWriter{ResponseWriter: w, stats: s.stats, op: &op}
	w = cw
	defer func() {
		if !cw.counted {
			s.stats.request(OpToken, status)
		}
	}()

	if err := sleep(r.Context(), s.opts.TokenLatency, s.rnd); err != nil {
		status = 499 // client went away; nothing is written
		return
	}
	if s.opts.TokenOutage.contains(s.elapsed()) {
		s.stats.reject(RejectTokenOutage)
		status = http.StatusServiceUnavailable
		s.writeTokenError(w, r, tokenError{status, "temporarily_unavailable", 90033, "A transient error has occurred. Please try again."})
		return
	}
	if s.opts.TokenFail503 > 0 && s.rnd.Float64() < s.opts.TokenFail503 {
		s.stats.reject(RejectTokenFault503)
		status = http.StatusServiceUnavailable
		s.writeTokenError(w, r, tokenError{status, "temporarily_unavailable", 90033, "A transient error has occurred. Please try again."})
		return
	}
	te, c := s.checkTokenRequest(w, r)
	if te != nil {
		s.stats.reject(te.kind)
		status = te.status
		s.writeTokenError(w, r, *te)
		return
	}
	tok, err := s.issue(c)
	if err != nil {
		s.log.Error("issue token", "client_id", c.ID, "err", err)
		status = http.StatusInternalServerError
		s.writeTokenError(w, r, tokenError{status, "server_error", 50000, "There was an error issuing a token."})
		return
	}
	s.stats.tokenIssued() // before the answer, so a client reading the counters finds it
	life := int(s.opts.TokenLifetime / time.Second)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-cache")
	w.Header().Set("Pragma", "no-cache")
	_ = json.NewEncoder(w).Encode(struct {
		TokenType    string `json:"token_type"`
		ExpiresIn    int    `json:"expires_in"`
		ExtExpiresIn int    `json:"ext_expires_in"`
		AccessToken  string `json:"access_token"`
	}{"Bearer", life, life, tok})
	s.log.Debug("token issued", "client_id", c.ID, "expires_in", life)
}

// checkTokenRequest validates a client-credentials request and returns the
// client, or the error the identity provider answers with.
func (s *Server) checkTokenRequest(w http.ResponseWriter, r *http.Request) (*tokenError, *Client) {
	tenant := r.PathValue("tenant")
	if r.Method != http.MethodPost {
		return &tokenError{http.StatusMethodNotAllowed, "invalid_request", 900561, "The endpoint only accepts POST requests. Received a " + r.Method + " request."}, nil
	}
	if tenant != s.opts.TenantID {
		return &tokenError{http.StatusBadRequest, "invalid_request", 90002, fmt.Sprintf("Tenant '%s' not found. Check to make sure you have the correct tenant ID and are signing into the correct cloud.", tenant)}, nil
	}
	if s.opts.MaxBodyBytes > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	}
	if err := r.ParseForm(); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			return &tokenError{http.StatusRequestEntityTooLarge, "invalid_request", 90056, "The request body is too large."}, nil
		}
		return &tokenError{http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: 'grant_type'."}, nil
	}
	missing := func(p string) *tokenError {
		return &tokenError{http.StatusBadRequest, "invalid_request", 900144, "The request body must contain the following parameter: '" + p + "'."}
	}
	grant := r.PostForm.Get("grant_type")
	if grant == "" {
		return missing("grant_type"), nil
	}
	if grant != "client_credentials" {
		return &tokenError{http.StatusBadRequest, "unsupported_grant_type", 70003, fmt.Sprintf("The app requested an unsupported grant type '%s'.", grant)}, nil
	}
	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: Basic credentials are form-encoded first.
		if u, err := url.QueryUnescape(id); err == nil {
			id = u
		}
		if u, err := url.QueryUnescape(secret); err == nil {
			secret = u
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id == "" {
		return missing("client_id"), nil
	}
	if secret == "" {
		return &tokenError{http.StatusBadRequest, "invalid_request", 7000216, "'client_assertion', 'client_secret' or 'request' is required for the 'client_credentials' grant type."}, nil
	}
	c := s.clients[id]
	if c == nil {
		return &tokenError{http.StatusUnauthorized, "invalid_client", 700016, fmt.Sprintf("Application with identifier '%s' was not found in the directory '%s'.", id, s.opts.TenantID)}, nil
	}
	if secret != c.Secret {
		return &tokenError{http.StatusUnauthorized, "invalid_client", 7000215, fmt.Sprintf("Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '%s'.", id)}, nil
	}
	scope := r.PostForm.Get("scope")
	if scope == "" {
		return missing("scope"), nil
	}
	if want := "api://" + s.opts.AppID + "/.default"; !slices.Contains(strings.Fields(scope), want) {
		return &tokenError{http.StatusBadRequest, "invalid_scope", 1002012, fmt.Sprintf("The provided value for scope %s is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).", scope)}, nil
	}
	if !c.Granted {
		return &tokenError{http.StatusBadRequest, "unauthorized_client", 700016, fmt.Sprintf("Application with identifier '%s' has not been granted access to '%s' by the operator of tenant '%s'.", id, s.opts.AppID, s.opts.TenantID)}, nil
	}
	return nil, c
}

func (s *Server) writeTokenError(w http.ResponseWriter, r *http.Request, te tokenError) {
	now := s.opts.Now().UTC()
	trace := uuid.NewString()
	corr := r.Header.Get("client-request-id")
	if _, err := uuid.Parse(corr); err != nil {
		corr = uuid.NewString()
	}
	ts := now.Format("2006-01-02 15:04:05Z")
	desc := fmt.Sprintf("AADSTS%d: %s Trace ID: %s Correlation ID: %s Timestamp: %s", te.code, te.desc, trace, corr, ts)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store, no-cache")
	if te.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="leadsim"`)
	}
	w.WriteHeader(te.status)
	_ = json.NewEncoder(w).Encode(struct {
		Error         string `json:"error"`
		Description   string `json:"error_description"`
		Codes         []int  `json:"error_codes"`
		Timestamp     string `json:"timestamp"`
		TraceID       string `json:"trace_id"`
		CorrelationID string `json:"correlation_id"`
		ErrorURI      string `json:"error_uri"`
	}{te.kind, desc, []int{te.code}, ts, trace, corr, "https://login.leadsim.local/error?code=" + strconv.Itoa(te.code)})
	s.log.Info("token refused", "oauth_error", te.kind, "code", te.code)
}
