#ifndef KIOSKCAM_CCURL_H
#define KIOSKCAM_CCURL_H
#include <curl/curl.h>

/* libcurl is opened on first use (dlopen), not linked: it brings 15 libraries of its own
   (Kerberos, LDAP, SASL, SSH, RTMP, nghttp2, …) that every start of kioskcam loaded
   for the offsite copies most appliances never configure. Only curl's header is used
   at build time; libcurl.so.4 (Debian's libcurl4) must be there at run time.

   kioskcam_curl_load opens it, resolves what kioskcam calls and runs curl_global_init,
   once per process (thread-safe); it returns 0, or -1 with the reason in `error`.
   Every other function here may be called only after it returned 0.

   curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one
   typed entry point per argument type. */
int kioskcam_curl_load(char *error, unsigned long length);

CURL *kioskcam_curl_easy_init(void);
void kioskcam_curl_easy_cleanup(CURL *handle);
CURLcode kioskcam_curl_easy_perform(CURL *handle);
const char *kioskcam_curl_easy_strerror(CURLcode code);
struct curl_slist *kioskcam_curl_slist_append(struct curl_slist *list, const char *text);
void kioskcam_curl_slist_free_all(struct curl_slist *list);

CURLcode kioskcam_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode kioskcam_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
CURLcode kioskcam_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode kioskcam_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode kioskcam_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);
CURLcode kioskcam_curl_setopt_write(CURL *handle, CURLoption option, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode kioskcam_curl_setopt_read(CURL *handle, CURLoption option, size_t (*callback)(char *, size_t, size_t, void *));
CURLcode kioskcam_curl_setopt_progress(CURL *handle, int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));
CURLcode kioskcam_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode kioskcam_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
#endif
