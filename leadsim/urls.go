package leadsim

import (
	"net/url"
	"strings"
)

// TokenURL is the token endpoint of the identity provider at base for
// tenant: base/tenant/oauth2/v2.0/token, the path the simulator serves and
// the one Microsoft's identity platform uses. A trailing slash on base is
// dropped and tenant is path-escaped.
func TokenURL(base, tenant string) string {
	return strings.TrimRight(base, "/") + "/" + url.PathEscape(tenant) + "/oauth2/v2.0/token"
}
