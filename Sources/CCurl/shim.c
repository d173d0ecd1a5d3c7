#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* What kioskcam calls in libcurl, resolved once by kioskcam_curl_load. */
static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
} curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Written only inside pthread_once: empty once libcurl is ready. */
static char failure[256] = "libcurl.so.4 was not loaded";

#define RESOLVE(library, field, name)                                              \
    do {                                                                           \
        *(void **)(&curl.field) = dlsym(library, name);                            \
        if (!curl.field) {                                                         \
            snprintf(failure, sizeof failure, "libcurl.so.4 has no %s", name);     \
            return;                                                                \
        }                                                                          \
    } while (0)

static void load(void) {
    /* RTLD_LOCAL: libcurl's own libraries stay out of the global namespace. Never
       closed: its handles and global state live as long as the process. */
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason ? reason : "libcurl.so.4 cannot be opened");
        return;
    }
    RESOLVE(library, global_init, "curl_global_init");
    RESOLVE(library, easy_init, "curl_easy_init");
    RESOLVE(library, easy_cleanup, "curl_easy_cleanup");
    RESOLVE(library, easy_perform, "curl_easy_perform");
    RESOLVE(library, easy_strerror, "curl_easy_strerror");
    RESOLVE(library, easy_setopt, "curl_easy_setopt");
    RESOLVE(library, easy_getinfo, "curl_easy_getinfo");
    RESOLVE(library, slist_append, "curl_slist_append");
    RESOLVE(library, slist_free_all, "curl_slist_free_all");
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(failure, sizeof failure, "curl_global_init failed (out of memory?)");
        return;
    }
    failure[0] = 0;
}

int kioskcam_curl_load(char *error, unsigned long length) {
    pthread_once(&once, load);
    if (failure[0] == 0) return 0;
    if (error && length > 0) snprintf(error, length, "%s", failure);
    return -1;
}

CURL *kioskcam_curl_easy_init(void) { return curl.easy_init(); }
void kioskcam_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode kioskcam_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *kioskcam_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
struct curl_slist *kioskcam_curl_slist_append(struct curl_slist *list, const char *text) { return curl.slist_append(list, text); }
void kioskcam_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode kioskcam_curl_setopt_long(CURL *handle, CURLoption option, long value) { return curl.easy_setopt(handle, option, value); }
CURLcode kioskcam_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) { return curl.easy_setopt(handle, option, value); }
CURLcode kioskcam_curl_setopt_string(CURL *handle, CURLoption option, const char *value) { return curl.easy_setopt(handle, option, value); }
CURLcode kioskcam_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) { return curl.easy_setopt(handle, option, value); }
CURLcode kioskcam_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl.easy_setopt(handle, option, value);
}
CURLcode kioskcam_curl_setopt_write(CURL *handle, CURLoption option, size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl.easy_setopt(handle, option, callback);
}
CURLcode kioskcam_curl_setopt_read(CURL *handle, CURLoption option, size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl.easy_setopt(handle, option, callback);
}
CURLcode kioskcam_curl_setopt_progress(CURL *handle, int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
CURLcode kioskcam_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) { return curl.easy_getinfo(handle, info, value); }
CURLcode kioskcam_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) { return curl.easy_getinfo(handle, info, value); }
