package token

import (
	"net/url"
	"strings"
)

// URL is the token endpoint of the identity provider at base for tenant:
// base/tenant/oauth2/v2.0/token, the path Microsoft's identity platform
// uses (and the simulator serves). A trailing slash on base is dropped and
// tenant is path-escaped.
func URL(base, tenant string) string {
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}
