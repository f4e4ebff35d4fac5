#include "storage/s3/curl_library.h"

#include <dlfcn.h>

#include <mutex>

namespace shoal::storage {
namespace {

constexpr const char* kLibrary = "libcurl.so.4";

template <typename Function>
bool Resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

Result<CurlLibrary> Open() {
  void* library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    return Unavailable(std::string("cannot load ") + kLibrary + " for S3 (" + (why ? why : "unknown") +
                       "); fix: install Debian's libcurl4 package");
  }
  CurlLibrary curl;
  CURLcode (*global_init)(long) = nullptr;
  bool found = Resolve(library, "curl_easy_init", curl.easy_init) && Resolve(library, "curl_easy_cleanup", curl.easy_cleanup) &&
               Resolve(library, "curl_easy_reset", curl.easy_reset) && Resolve(library, "curl_easy_setopt", curl.easy_setopt) &&
               Resolve(library, "curl_easy_getinfo", curl.easy_getinfo) &&
               Resolve(library, "curl_easy_perform", curl.easy_perform) &&
               Resolve(library, "curl_easy_strerror", curl.easy_strerror) &&
               Resolve(library, "curl_slist_append", curl.slist_append) &&
               Resolve(library, "curl_slist_free_all", curl.slist_free_all) &&
               Resolve(library, "curl_global_init", global_init);
  if (!found) return Unavailable(std::string(kLibrary) + " lacks a function Shoal uses; fix: install Debian's libcurl4");
  if (CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
    return Unavailable(std::string("curl_global_init failed: ") + curl.easy_strerror(rc));
  }
  return curl;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const CurlLibrary*> CurlLibrary::Load() {
  static std::once_flag once;
  static Result<CurlLibrary> loaded = Internal("not loaded");
  std::call_once(once, [] { loaded = Open(); });
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace shoal::storage
