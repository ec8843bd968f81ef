#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdarg.h>
#include <string.h>
#include <microhttpd.h>

/* Swift cannot call C variadic functions: these fixed-argument wrappers give it the few variadic calls of
 * libmicrohttpd it needs (MHD_start_daemon, MHD_get_connection_info, MHD_get_daemon_info). */

/* Leaves the request target as received: the router refuses percent-escapes itself, so an encoded `/` or `..`
 * can never become a path separator. */
static inline size_t caether_mhd_keep_escapes(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls;
    (void)connection;
    return strlen(s);
}

/* Starts a daemon: `flags` (MHD_FLAG bits), bound to `address`; TLS when both PEM strings are given. `accept`
 * (MHD_AcceptPolicyCallback) decides on each accepted socket before the connection exists (the per-client limit
 * is the caller's, so that it can count refusals: MHD_OPTION_PER_IP_CONNECTION_LIMIT refuses silently); `notify`
 * (MHD_OPTION_NOTIFY_CONNECTION) hears each connection start and close; all callbacks get `context`. */
static inline struct MHD_Daemon *caether_mhd_start(
    unsigned int flags, const struct sockaddr *address, MHD_AccessHandlerCallback handler, void *context,
    MHD_RequestCompletedCallback completed, MHD_AcceptPolicyCallback accept, MHD_NotifyConnectionCallback notify,
    unsigned int connection_timeout, size_t connection_memory_limit, unsigned int connection_limit,
    const char *tls_key, const char *tls_cert) {
    if (tls_key != NULL && tls_cert != NULL) {
        return MHD_start_daemon(
            flags | MHD_USE_TLS, 0, accept, context, handler, context, MHD_OPTION_SOCK_ADDR, address,
            MHD_OPTION_NOTIFY_COMPLETED, completed, context, MHD_OPTION_NOTIFY_CONNECTION, notify, context,
            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
            connection_memory_limit, MHD_OPTION_CONNECTION_LIMIT, connection_limit, MHD_OPTION_UNESCAPE_CALLBACK,
            caether_mhd_keep_escapes, NULL, MHD_OPTION_HTTPS_MEM_KEY, tls_key, MHD_OPTION_HTTPS_MEM_CERT, tls_cert,
            MHD_OPTION_END);
    }
    return MHD_start_daemon(
        flags, 0, accept, context, handler, context, MHD_OPTION_SOCK_ADDR, address, MHD_OPTION_NOTIFY_COMPLETED,
        completed, context, MHD_OPTION_NOTIFY_CONNECTION, notify, context, MHD_OPTION_CONNECTION_TIMEOUT,
        connection_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit, MHD_OPTION_CONNECTION_LIMIT,
        connection_limit, MHD_OPTION_UNESCAPE_CALLBACK, caether_mhd_keep_escapes, NULL, MHD_OPTION_END);
}

/* The socket of a connection, or -1. */
static inline int caether_mhd_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/* The client's address of a connection, or NULL. */
static inline const struct sockaddr *caether_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

/* The port the daemon listens on (useful after binding port 0), or 0. */
static inline uint16_t caether_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* Connections open now. */
static inline unsigned int caether_mhd_connection_count(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}
