// libcurl for Swift: curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
// call, so each gets one typed inline wrapper per argument kind. Nothing else is added.
#ifndef CAETHER_CURL_SHIM_H
#define CAETHER_CURL_SHIM_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

static inline CURLcode caether_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode caether_curl_setopt_offset(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode caether_curl_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode caether_curl_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode caether_curl_setopt_list(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode caether_curl_setopt_read_function(CURL *easy, curl_read_callback function) {
    return curl_easy_setopt(easy, CURLOPT_READFUNCTION, function);
}

/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (same signature).
static inline CURLcode caether_curl_setopt_write_function(CURL *easy, CURLoption option, curl_write_callback function) {
    return curl_easy_setopt(easy, option, function);
}

static inline CURLcode caether_curl_setopt_ssl_ctx_function(CURL *easy, curl_ssl_ctx_callback function) {
    return curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, function);
}

static inline CURLcode caether_curl_setopt_sockopt_function(CURL *easy, curl_sockopt_callback function) {
    return curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, function);
}

static inline CURLcode caether_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode caether_curl_getinfo_offset(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode caether_curl_getinfo_socket(CURL *easy, CURLINFO info, curl_socket_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode caether_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

#endif
