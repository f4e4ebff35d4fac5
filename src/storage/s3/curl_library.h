// CurlLibrary: libcurl, loaded the first time Shoal talks to S3 instead of when any
// `shoal` process starts. libcurl brings about 25 shared libraries (TLS, Kerberos, LDAP,
// SSH, IDN); loading them took every `shoal` process about 3.5 ms and 3.9 MB of resident
// memory, which every task's container agent paid without ever touching S3
// (docs/benchmarks.md, bench/slurm and bench/scale).
//
// Contract:
//  - Load() dlopens libcurl.so.4 once per process, resolves the functions below and runs
//    curl_global_init; later calls return the same table. An error names the library and
//    the package that provides it; the first error is returned on every call.
//  - The function pointers have libcurl's own signatures (setopt and getinfo are
//    variadic, as in curl.h).
// Thread-safety: Load() is safe from any thread; the table is immutable once loaded.
#pragma once

#include <curl/curl.h>

#include "common/status.h"

namespace shoal::storage {

struct CurlLibrary {
  CURL* (*easy_init)() = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;

  static Result<const CurlLibrary*> Load();
};

}  // namespace shoal::storage
