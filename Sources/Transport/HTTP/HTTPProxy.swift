/// Where a client's requests go through.
public enum HTTPProxy: Sendable, Equatable {
    /// libcurl's standard environment variables: `http_proxy` (lower case only: the upper-case form is ignored for
    /// plain HTTP, since a CGI program's `HTTP_PROXY` can be set by a request header), `https_proxy`/`HTTPS_PROXY`,
    /// `all_proxy`/`ALL_PROXY`, and `no_proxy`/`NO_PROXY` for the exceptions.
    case environment
    /// No proxy, whatever the environment says.
    case none
    /// This proxy URL (`http://host:port`, `socks5h://...`); `no_proxy` from the environment still applies.
    case url(String)
}
