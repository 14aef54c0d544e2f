package leadsim

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Bodies of Options.ProxyResetBody: what a proxy in front of the service
// writes when the backend resets the stream after it committed. None is
// the service's GraphQL answer.
const (
	ProxyBodyText  = "text"  // Envoy's text/plain line
	ProxyBodyHTML  = "html"  // a gateway's HTML page
	ProxyBodyEmpty = "empty" // no body at all
)

// proxyResetText is Envoy's body for a backend that reset the stream
// before its answer's headers.
const proxyResetText = "upstream connect error or disconnect/reset before headers. reset reason: connection termination"

// checkProxyReset validates the proxy reset options of o and fills in
// their defaults.
func (o *Options) checkProxyReset() error {
	switch o.ProxyResetStatus {
	case 0:
		o.ProxyResetStatus = http.StatusServiceUnavailable
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
	default:
		return fmt.Errorf("leadsim options: proxy reset status %d: use 503, 502 or 504", o.ProxyResetStatus)
	}
	switch o.ProxyResetBody {
	case "":
		o.ProxyResetBody = ProxyBodyText
	case ProxyBodyText, ProxyBodyHTML, ProxyBodyEmpty:
	default:
		return fmt.Errorf("leadsim options: proxy reset body %q: use %s, %s or %s", o.ProxyResetBody, ProxyBodyText, ProxyBodyHTML, ProxyBodyEmpty)
	}
	return nil
}

// writeProxyReset answers a request the service processed the way a proxy
// does whose backend reset the stream: status and body of the options,
// never GraphQL.
func writeProxyReset(w http.ResponseWriter, o *Options) {
	var ctype, body string
	switch o.ProxyResetBody {
	case ProxyBodyHTML:
		text := strconv.Itoa(o.ProxyResetStatus) + " " + http.StatusText(o.ProxyResetStatus)
		ctype, body = "text/html", "<html>\r\n<head><title>"+text+"</title></head>\r\n<body>\r\n<center><h1>"+text+"</h1></center>\r\n</body>\r\n</html>\r\n"
	case ProxyBodyEmpty:
	default:
		ctype, body = "text/plain", proxyResetText
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	if o.ProxyResetRetryAfter != "" {
		w.Header().Set("Retry-After", retryAfterValue(o.ProxyResetRetryAfter, o.Now()))
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(o.ProxyResetStatus)
	_, _ = io.WriteString(w, body)
}
